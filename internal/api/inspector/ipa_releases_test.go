package inspector_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"testing"

	"github.com/ferrometal/ferro/internal/testing/iparelease"
)

// TestContinue_EveryIPARelease posts the report of every IPA release from
// 9.4 to 12.0 to /v1/continue with exactly the headers that release sends
// (no Content-Type before 9.9), and checks that it is processed and stored
// as sent: numa_node_id as a string, bmc_address null, the new inventory
// fields.
func TestContinue_EveryIPARelease(t *testing.T) {
	r := newRig(t)
	for _, rel := range iparelease.All(t) {
		t.Run(rel.Release, func(t *testing.T) {
			n := r.node(t, nodeSpec{macs: rel.MACs[:1]})
			r.start(t, n.UUID, false, "")
			body := rel.Body(t)
			req, err := http.NewRequest(http.MethodPost, r.srv.URL+"/v1/continue", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = rel.Header()
			resp, err := r.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("continue = %d %s", resp.StatusCode, answer)
			}
			var got struct{ UUID string }
			if err := json.Unmarshal(answer, &got); err != nil || got.UUID != n.UUID {
				t.Errorf("answer %s, want the node's uuid %s", answer, n.UUID)
			}

			props := r.getNode(t, n.UUID).Properties
			for k, want := range map[string]any{"cpus": "4", "memory_mb": "8192", "cpu_arch": "x86_64", "local_gb": "19"} {
				if props[k] != want {
					t.Errorf("properties[%s] = %#v, want %#v", k, props[k], want)
				}
			}
			if in := r.introspection(t, n.UUID); in.State != "finished" || in.Error != "" {
				t.Errorf("introspection %s %q", in.State, in.Error)
			}
			// The unprocessed data is the report as sent, less the ramdisk
			// logs, which are never kept in it.
			var sent, raw, processed map[string]any
			decode(t, body, &sent)
			decode(t, r.data(t, n.UUID, "raw"), &raw)
			if _, ok := raw["logs"]; ok {
				t.Error("the unprocessed data keeps the ramdisk logs")
			}
			_, hasLogs := sent["logs"]
			delete(sent, "logs")
			if !reflect.DeepEqual(sent, raw) {
				t.Error("the unprocessed data is not the report as sent")
			}
			if !hasLogs && !bytes.Equal(r.data(t, n.UUID, "raw"), body) {
				t.Error("a report without logs is not stored byte for byte")
			}
			// The processed data keeps the inventory whole, as sent.
			decode(t, r.data(t, n.UUID, "processed"), &processed)
			if !reflect.DeepEqual(sent["inventory"], processed["inventory"]) {
				t.Error("the processed data's inventory is not the one sent")
			}
			if !reflect.DeepEqual(sent["pci_devices"], processed["pci_devices"]) {
				t.Errorf("pci_devices stored as %v, sent %v", processed["pci_devices"], sent["pci_devices"])
			}
			if _, ok := processed["logs"]; ok {
				t.Error("the processed data keeps the ramdisk logs")
			}
		})
	}
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatal(err)
	}
}
