package vbmctest

import (
	"encoding/json"
	"net/http"
	"testing"
)

func TestStart_ServesRedfishAndIPMIPerMachineUntilStopped(t *testing.T) {
	v := Start(t, Config{Machines: FakeMachines("h", 3)})
	if len(v.IPMI) != 3 {
		t.Fatalf("IPMI endpoints = %v, want 3", v.IPMI)
	}
	seen := map[int]bool{}
	for name, e := range v.IPMI {
		if e.Port == 0 || seen[e.Port] {
			t.Errorf("machine %s: IPMI port %d is zero or shared", name, e.Port)
		}
		seen[e.Port] = true
	}
	req, _ := http.NewRequest(http.MethodGet, v.RedfishURL+"/redfish/v1/Systems", nil)
	req.SetBasicAuth(v.Username, v.Password)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var coll struct {
		Count int `json:"Members@odata.count"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&coll); err != nil || resp.StatusCode != 200 || coll.Count != 3 {
		t.Fatalf("GET Systems: status %d, count %d, err %v", resp.StatusCode, coll.Count, err)
	}
	v.Stop(t)
}
