package metal3_test

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ferrometal/ferro/test/inspection"
)

// ipa12Report is an inspection report shaped as ironic-python-agent 12.0
// posts it (ironic_python_agent/inspector.py call_inspector, collectors
// default and logs, ipa-collect-lldp=1 so that LLDP is in each interface):
// a QEMU machine with two NICs, LLDP from a Juniper switch on eth0, no
// BMC (bmc_address null).
//
//go:embed testdata/ipa12-metal3.json
var ipa12Report []byte

// The report's NICs; the test's BMC machines have these MACs.
const (
	pxeMAC   = "52:54:00:12:34:56" // eth0, inventory.boot.pxe_interface
	otherMAC = "52:54:00:12:34:57" // eth1
)

// agent stands in for IPA 12 booted by the node's ramdisk: it reads the
// callback URL from the kernel command line ferro prepared and posts the
// report there with IPA's headers.
type agent struct {
	// bootConfig returns the kernel command line's parameters once the
	// ramdisk is prepared (an error until then).
	bootConfig func() (*inspection.BootConfig, error)
	posted     bool
	callback   string
	status     int
	answer     []byte
}

// ipxeBootConfig reads the per-MAC iPXE script under the HTTP root.
func ipxeBootConfig(httpRoot string) func() (*inspection.BootConfig, error) {
	return func() (*inspection.BootConfig, error) { return inspection.ReadBootConfig("ipxe", httpRoot, pxeMAC) }
}

// vmediaBootConfig reads grub.cfg from the ISO the virtual BMC fetched
// into its state directory.
func vmediaBootConfig(isoinfo, stateDir string) func() (*inspection.BootConfig, error) {
	return func() (*inspection.BootConfig, error) {
		isos, _ := filepath.Glob(filepath.Join(stateDir, "*", "*.iso"))
		if len(isos) == 0 {
			return nil, errors.New("no ISO inserted in the virtual BMC")
		}
		grub, err := exec.Command(isoinfo, "-R", "-i", isos[0], "-x", "/boot/grub/grub.cfg").Output()
		if err != nil {
			return nil, fmt.Errorf("read grub.cfg from %s: %w", isos[0], err)
		}
		return inspection.ParseBootConfig("grub", grub)
	}
}

// post sends the report as IPA 12 does: POST, Content-Type and Accept
// application/json, no microversion header, no token (IPA's
// call_inspector sends X-OpenStack-Request-ID only when
// global_request_id is set, which Ironic's kernel parameters do not).
func (a *agent) post(ctx context.Context, callback string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, callback, bytes.NewReader(ipa12Report))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	a.answer, _ = io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	a.posted, a.callback, a.status = true, callback, resp.StatusCode
	return nil
}

// tryPost posts once the boot configuration is there. It returns false
// while the ramdisk is not prepared yet.
func (a *agent) tryPost(ctx context.Context) (bool, error) {
	if a.posted {
		return true, nil
	}
	bc, err := a.bootConfig()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "no ISO") {
			return false, nil
		}
		return false, err
	}
	return true, a.post(ctx, bc.Callback)
}

// checkAnswer judges the callback's answer as IPA and Ironic would: 2xx
// is success for IPA; Ironic master's POST /v1/continue_inspection
// answers 202 with {"uuid": …} at API 1.1 (what IPA sends).
func (a *agent) checkAnswer(nodeUUID string) error {
	if a.status/100 != 2 {
		return fmt.Errorf("POST %s: HTTP %d %s (IPA logs an error and the inspection times out)", a.callback, a.status, a.answer)
	}
	if !strings.HasSuffix(a.callback, "/v1/continue_inspection") {
		return fmt.Errorf("the kernel command line's ipa-inspection-callback-url is %s, not the bare metal API's /v1/continue_inspection (the agent inspect interface, issue 16 §1–2)", a.callback)
	}
	var body struct {
		UUID string `json:"uuid"`
	}
	if a.status != http.StatusAccepted || json.Unmarshal(a.answer, &body) != nil || body.UUID != nodeUUID {
		return fmt.Errorf("POST %s: HTTP %d %s; Ironic answers 202 {\"uuid\": %q} at 1.1", a.callback, a.status, a.answer, nodeUUID)
	}
	return nil
}
