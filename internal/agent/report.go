package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/inventory"
)

// Collector names (ironic-python-agent's) that ferro-agent implements.
// "default" (the inventory) always runs.
const (
	CollectorDefault = "default"
	CollectorPCI     = "pci-devices"
	CollectorLLDP    = "lldp"
)

// DefaultCollectors run when the command line names none.
var DefaultCollectors = []string{CollectorDefault, CollectorPCI, CollectorLLDP}

// ManagerName and ManagerVersion identify the agent in the report's
// configuration, where IPA lists its hardware managers.
const (
	ManagerName    = "ferro_agent"
	ManagerVersion = "1"
)

// Failures accumulates what went wrong while collecting, for the report's
// error field (IPA's AccumulatedFailures wording).
type Failures struct{ msgs []string }

// Add records a failure; nil is ignored.
func (f *Failures) Add(err error) {
	if err != nil {
		f.msgs = append(f.msgs, err.Error())
	}
}

// Error is the report's error value: nil when nothing failed.
func (f *Failures) Error() *string {
	if len(f.msgs) == 0 {
		return nil
	}
	s := "The following errors were encountered:\n* " + strings.Join(f.msgs, "\n* ")
	return &s
}

// Host is what Collect reads the machine through; the real system's
// fields are set by Run, tests give fixture trees and fakes.
type Host struct {
	Root  string   // "/" on the machine
	Addrs AddrFunc // nil: no addresses
	// BMC reads the BMC's addresses; nil, or an error wrapping
	// errNotFound, means the machine has none.
	BMC func(context.Context) (*BMC, error)
	// LLDP captures frames on the named interfaces; nil skips the
	// lldp collector.
	LLDP func(ctx context.Context, names []string, timeout time.Duration) (map[string][]inventory.TLV, error)
	// Network configures the named interfaces (DHCP); nil leaves them
	// as they are. Collect runs it while it reads the hardware and
	// listens for LLDP, and reads the interfaces' addresses after it.
	Network func(ctx context.Context, names []string) error
}

// Collect builds the report. A failing collector does not stop the others:
// its error goes into the report's error field, so the operator sees it.
func Collect(ctx context.Context, log *slog.Logger, h Host, p Params, failures *Failures) *inventory.Report {
	collectors := p.Collectors
	if collectors == nil {
		collectors = DefaultCollectors
	}
	inv := &inventory.Inventory{Interfaces: []inventory.Interface{}, Disks: []inventory.Disk{}}
	rep := &inventory.Report{Inventory: inv, BootInterface: p.BootIF}

	// The network (a DHCP exchange), LLDP (a wait for frames) and the
	// BMC (an IPMI conversation) are waits: they run while the rest is
	// read. Their errors are added in a fixed order once all are done.
	var names []string
	ifs, listErr := Interfaces(h.Root, nil)
	for _, ifc := range ifs {
		names = append(names, ifc.Name)
	}
	netDone := make(chan error, 1)
	if h.Network != nil {
		go func() { netDone <- h.Network(ctx, names) }()
	} else {
		netDone <- nil
	}
	type lldpResult struct {
		raw map[string][]inventory.TLV
		err error
	}
	var lldpDone chan lldpResult
	if h.LLDP != nil && (slices.Contains(collectors, CollectorLLDP) || p.CollectLLDP) && listErr == nil {
		lldpDone = make(chan lldpResult, 1)
		go func() {
			raw, err := h.LLDP(ctx, names, p.LLDPTimeout)
			lldpDone <- lldpResult{raw, err}
		}()
	}
	type bmcResult struct {
		bmc *BMC
		err error
	}
	bmcDone := make(chan bmcResult, 1)
	if h.BMC != nil {
		go func() {
			bmc, err := h.BMC(ctx)
			bmcDone <- bmcResult{bmc, err}
		}()
	} else {
		bmcDone <- bmcResult{err: errNotFound}
	}

	t0 := time.Now()
	smb, err := SMBIOS(h.Root)
	if err != nil && !errors.Is(err, errNotFound) {
		failures.Add(err)
	}
	if inv.CPU, err = CPU(h.Root); err != nil {
		failures.Add(err)
	}
	if inv.Memory, err = Memory(h.Root, smb); err != nil {
		failures.Add(err)
	}
	if smb != nil {
		if inv.SystemVendor, err = SystemVendor(smb); err != nil {
			failures.Add(err)
		}
	}
	if d, err := Disks(h.Root); err != nil {
		failures.Add(err)
	} else {
		inv.Disks = d
		rep.RootDisk = RootDisk(d)
	}
	inv.Boot = Boot(h.Root, p.BootIF)
	inv.Hostname = Hostname(h.Root)
	var pciErr error
	if slices.Contains(collectors, CollectorPCI) {
		rep.PCIDevices, pciErr = PCIDevices(h.Root)
	}
	var names41 map[string]string
	if smb != nil {
		names41 = BIOSDevNames(h.Root, smb)
	}

	log.Debug("hardware read", "took", time.Since(t0).Round(time.Millisecond))

	switch r := <-bmcDone; {
	case errors.Is(r.err, errNotFound):
		log.Debug("no in-band IPMI device")
	case r.err != nil:
		failures.Add(r.err)
	default:
		inv.BMCAddress, inv.BMCV6Address, inv.BMCMAC = r.bmc.Address, r.bmc.V6Address, r.bmc.MAC
	}
	failures.Add(<-netDone)
	// after the network: the addresses DHCP gave
	if ifs, err := Interfaces(h.Root, h.Addrs); err != nil {
		failures.Add(err)
	} else {
		for i := range ifs {
			ifs[i].BIOSDevName = names41[ifs[i].Name]
		}
		inv.Interfaces = ifs
	}

	// One capture serves both dialects: lldp_raw (the lldp collector) and,
	// with ipa-collect-lldp, inventory.interfaces[].lldp as IPA's
	// list_network_interfaces fills it.
	var lldp *lldpResult
	takeLLDP := func() *lldpResult {
		if lldp == nil && lldpDone != nil {
			r := <-lldpDone
			failures.Add(r.err)
			lldp = &r
		}
		return lldp
	}
	if p.CollectLLDP {
		if r := takeLLDP(); r != nil {
			for i := range inv.Interfaces {
				inv.Interfaces[i].LLDP = r.raw[inv.Interfaces[i].Name]
			}
		}
	}
	ran := []string{CollectorDefault}
	for _, c := range collectors {
		switch c {
		case CollectorDefault:
		case CollectorPCI:
			ran = append(ran, c)
			failures.Add(pciErr)
		case CollectorLLDP:
			if lldpDone == nil {
				continue
			}
			ran = append(ran, c)
			rep.LLDPRaw = takeLLDP().raw
		default:
			log.Info("collector not implemented, skipped", "collector", c)
		}
	}
	rep.Configuration = &inventory.Configuration{
		Collectors: slices.Compact(ran),
		Managers:   []inventory.Manager{{Name: ManagerName, Version: ManagerVersion}},
	}
	return rep
}

// Poster sends the report to the inspection callback.
type Poster struct {
	URL   string
	Token string // sent as callback.TokenHeader when set; never logged
	// Client defaults to one with a 30 s timeout per attempt.
	Client *http.Client
	// Deadline bounds all attempts together.
	Deadline time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts
	// (exponential, with jitter); 0 means 1 s and 30 s.
	MinBackoff, MaxBackoff time.Duration
	Log                    *slog.Logger
}

// ErrRejected is returned (wrapped) when the inspector refused the report
// with a 4xx status other than 404/409/429: retrying the same body will not
// help.
var ErrRejected = errors.New("inspector rejected the report")

// Post sends rep until the inspector accepts it (2xx), it is rejected, or
// the deadline passes. It returns the inspector's answer body.
func (p *Poster) Post(ctx context.Context, rep *inventory.Report) ([]byte, error) {
	body, err := json.Marshal(rep)
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	client := p.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	minB, maxB := p.MinBackoff, p.MaxBackoff
	if minB <= 0 {
		minB = time.Second
	}
	if maxB <= 0 {
		maxB = 30 * time.Second
	}
	if p.Deadline > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.Deadline)
		defer cancel()
	}
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wait := minB
	for attempt := 1; ; attempt++ {
		answer, retry, err := p.once(ctx, client, body)
		if err == nil {
			log.Info("report accepted", "attempt", attempt, "bytes", len(body))
			return answer, nil
		}
		if !retry {
			return nil, err
		}
		log.Warn("report not accepted, will retry", "attempt", attempt, "err", err, "wait", wait)
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("post report: gave up after %d attempts: %w (last: %v)", attempt, ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, maxB)
	}
}

// AcceptedNode is the UUID of the node an answer names: ironic-inspector's
// and the bare metal API's at 1.1 {"uuid": …}, the lookup answer of
// /v1/continue_inspection at ≥ 1.84 {"node": {"uuid": …}, "config": …};
// "" for anything else.
func AcceptedNode(answer []byte) string {
	var a struct {
		UUID string `json:"uuid"`
		Node struct {
			UUID string `json:"uuid"`
		} `json:"node"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return ""
	}
	if a.UUID != "" {
		return a.UUID
	}
	return a.Node.UUID
}

// once makes one attempt; retry says whether another may succeed.
func (p *Poster) once(ctx context.Context, client *http.Client, body []byte) ([]byte, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("post report: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if p.Token != "" {
		req.Header.Set(callback.TokenHeader, p.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, true, fmt.Errorf("post report: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode/100 == 2:
		return answer, false, nil
	case resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusConflict,
		resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500:
		// not yet waiting for us, busy, or down: worth another try
		return nil, true, fmt.Errorf("post report: %s: %s", resp.Status, snippet(answer))
	default:
		return nil, false, fmt.Errorf("post report: %w: %s: %s", ErrRejected, resp.Status, snippet(answer))
	}
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
