package neutrontest

import (
	"errors"
	"net/http"
	"syscall"
	"testing"

	"github.com/google/uuid"
)

func TestStart_ServesAndLeavesNoProcessBehind(t *testing.T) {
	var pgid int
	t.Run("server", func(t *testing.T) {
		s := Start(t)
		pgid = s.cmd.Process.Pid

		vlan := s.CreateNetwork(t, NetworkOpts{Name: "tenant", Type: "vlan", SegmentationID: 1042})
		var net struct {
			Network map[string]any `json:"network"`
		}
		if code := s.Do(t, http.MethodGet, "/networks/"+vlan, nil, &net); code != http.StatusOK {
			t.Fatalf("GET /networks/%s: HTTP %d", vlan, code)
		}
		if net.Network["provider:network_type"] != "vlan" || net.Network["provider:segmentation_id"] != 1042.0 ||
			net.Network["provider:physical_network"] != PhysicalNetwork {
			t.Errorf("vlan network = %v", net.Network)
		}

		host := uuid.NewString()
		s.AddBaremetalAgent(t, host, "physnet1", "physnet2")
		var out struct {
			Agents []struct {
				AgentType      string         `json:"agent_type"`
				Host           string         `json:"host"`
				Alive          bool           `json:"alive"`
				Configurations map[string]any `json:"configurations"`
			} `json:"agents"`
		}
		if code := s.Do(t, http.MethodGet, "/agents?host="+host, nil, &out); code != http.StatusOK {
			t.Fatalf("GET /agents: HTTP %d", code)
		}
		if len(out.Agents) != 1 {
			t.Fatalf("agents for %s: %+v, want one", host, out.Agents)
		}
		a := out.Agents[0]
		bm, _ := a.Configurations["bridge_mappings"].(map[string]any)
		if a.AgentType != "Baremetal Node" || !a.Alive || bm["physnet1"] == nil || bm["physnet2"] == nil {
			t.Errorf("agent = %+v, want an alive Baremetal Node with bridge_mappings for physnet1 and physnet2", a)
		}
	})
	if pgid == 0 {
		return // skipped or failed before the server started
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d of neutron-server still exists after the test ended (kill: %v)", pgid, err)
	}
}
