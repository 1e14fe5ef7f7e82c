package metrics

import (
	"net/http"
	"strings"
	"sync"
	"time"
)

// IPMI returns the callback the IPMI client calls once per operation
// (bmc/ipmi Options.Observe): op is the operation's step ("power status",
// "set boot device"), d its time with retries, err its outcome.
func (m *Metrics) IPMI() func(op string, d time.Duration, err error) {
	return func(op string, d time.Duration, err error) {
		op = labelValue(op)
		m.bmcRequests.WithLabelValues("ipmi", op, result(err)).Inc()
		m.bmcDuration.WithLabelValues("ipmi", op).Observe(d.Seconds())
	}
}

// Redfish wraps the Redfish client's transport (bmc/redfish
// Options.WrapTransport) to count and time every request. The operation
// is the method and the path with its resource ids replaced
// ("POST Systems/{id}/Actions/ComputerSystem.Reset"); a BMC with paths of
// its own adds at most maxRedfishOperations values, then "other".
func (m *Metrics) Redfish(next http.RoundTripper) http.RoundTripper {
	return redfishTransport{m: m, next: next}
}

type redfishTransport struct {
	m    *Metrics
	next http.RoundTripper
}

func (t redfishTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	op := t.m.redfishOps.bound(methodLabel(req.Method) + " " + redfishOperation(req.URL.Path))
	failed := err
	if err == nil && resp.StatusCode >= 400 {
		failed = errStatus
	}
	t.m.bmcRequests.WithLabelValues("redfish", op, result(failed)).Inc()
	t.m.bmcDuration.WithLabelValues("redfish", op).Observe(time.Since(start).Seconds())
	return resp, err
}

type statusError struct{}

func (statusError) Error() string { return "HTTP error status" }

var errStatus error = statusError{}

// redfishCollections are the Redfish collections whose members are named
// by an id of the BMC's choosing.
var redfishCollections = map[string]bool{
	"Systems": true, "Managers": true, "Chassis": true, "VirtualMedia": true, "Sessions": true,
	"Accounts": true, "Roles": true, "EthernetInterfaces": true, "Storage": true, "Drives": true, "Volumes": true,
	"Processors": true, "Memory": true, "SimpleStorage": true, "NetworkInterfaces": true, "NetworkAdapters": true,
	"Ports": true, "PCIeDevices": true, "PCIeFunctions": true, "Tasks": true, "LogServices": true, "Entries": true,
	"Controllers": true, "Subscriptions": true, "FirmwareInventory": true, "SoftwareInventory": true,
	"Members": true, "Power": false,
}

// redfishOperation is the path under /redfish/v1 with member ids replaced
// by {id}: "/redfish/v1/Systems/System.Embedded.1/Actions/ComputerSystem.Reset"
// → "Systems/{id}/Actions/ComputerSystem.Reset".
func redfishOperation(path string) string {
	rest, ok := strings.CutPrefix(path, "/redfish/v1")
	if !ok {
		return "other"
	}
	segs := strings.Split(strings.Trim(rest, "/"), "/")
	if len(segs) == 1 && segs[0] == "" {
		return "ServiceRoot"
	}
	for i := 1; i < len(segs); i++ {
		if redfishCollections[segs[i-1]] {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// maxRedfishOperations bounds the operation label's values.
const maxRedfishOperations = 200

// labelSet lets through at most max distinct values, then "other".
type labelSet struct {
	mu   sync.Mutex
	max  int
	seen map[string]bool
}

func newLabelSet(max int) *labelSet { return &labelSet{max: max, seen: map[string]bool{}} }

func (s *labelSet) bound(v string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[v] {
		return v
	}
	if len(s.seen) >= s.max || len(v) > 128 {
		return "other"
	}
	s.seen[v] = true
	return v
}
