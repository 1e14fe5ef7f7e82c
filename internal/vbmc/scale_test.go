package vbmc

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/bougou/go-ipmi/pkg/client"
	"github.com/bougou/go-ipmi/pkg/command/chassis"
)

// TestScale_HundredMachinesPowerInParallel powers 100 fake machines on and
// off at once, half through Redfish and half through IPMI sessions, and
// checks every machine ends where its own client left it.
func TestScale_HundredMachinesPowerInParallel(t *testing.T) {
	const n, rounds = 100, 3
	names := make([]string, n)
	for i := range names {
		names[i] = "s" + strconv.Itoa(i)
	}
	srv, ready := startServer(t, names...)
	httpc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	ctx := context.Background()

	redfish := func(name, rt string) error {
		req, _ := http.NewRequest("POST", ready.RedfishURL+"/redfish/v1/Systems/"+name+"/Actions/ComputerSystem.Reset", strings.NewReader(`{"ResetType":"`+rt+`"}`))
		req.SetBasicAuth("admin", "vbmc-pass")
		resp, err := httpc.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return fmt.Errorf("%s %s: status %d", name, rt, resp.StatusCode)
		}
		return nil
	}
	ipmi := func(name string, on bool) error {
		host, port, _ := net.SplitHostPort(ready.IPMI[name])
		p, _ := strconv.Atoi(port)
		c, err := client.NewClient(host, p, "admin", "vbmc-pass")
		if err != nil {
			return err
		}
		c.WithInterface(client.InterfaceLanplus)
		if err := c.Connect(ctx); err != nil {
			return fmt.Errorf("%s: connect: %w", name, err)
		}
		defer c.Close(ctx)
		ctl := chassis.ChassisControlPowerDown
		if on {
			ctl = chassis.ChassisControlPowerUp
		}
		if _, err := c.ChassisControl(ctx, ctl); err != nil {
			return fmt.Errorf("%s: chassis control: %w", name, err)
		}
		return nil
	}

	var wg sync.WaitGroup
	errs := make(chan error, n*rounds*2)
	for i, name := range names {
		wg.Go(func() {
			for r := range rounds {
				last := r == rounds-1
				var err error
				if i%2 == 0 {
					err = redfish(name, "On")
					if err == nil && !last {
						err = redfish(name, "ForceOff")
					}
				} else {
					err = ipmi(name, true)
					if err == nil && !last {
						err = ipmi(name, false)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, name := range names {
		m := srv.Machine(name)
		if on, _ := m.PowerState(ctx); !on || m.Boots() != rounds {
			t.Errorf("%s: on=%v after %d boots, want on after %d", name, on, m.Boots(), rounds)
		}
	}
}
