package inspect

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

// What the inspection ramdisk boots with, the same for both in-band
// interfaces: the kernel parameters of [inspector]extra_kernel_params and
// driver_info, the agent it runs and the callback token that agent gets.

// Agents an inspection ramdisk may run ([inspector]agent,
// driver_info[inspection_agent]). The agent decides the callback's
// authentication: ferro issues a per-inspection token, and then requires
// it, only to an agent known to present it.
const (
	// AgentIPA is the stock ironic-python-agent: it knows no token, so none
	// is issued and its report is matched by MAC and BMC address only, as
	// upstream does.
	AgentIPA = "ironic-python-agent"
	// AgentFerro is ferro-agent: a token is issued on its kernel command
	// line and a report without it is refused.
	AgentFerro = "ferro-agent"
	// AgentAuto is AgentFerro when the node's deploy ramdisk (or ISO) is
	// one `ferro ramdisk build` made (its file name starts with
	// "ferro-agent"), else AgentIPA.
	AgentAuto = "auto"
)

// agentKind resolves the agent the node's inspection ramdisk runs:
// driver_info[inspection_agent], else configured ([inspector]agent); auto
// is decided by the deploy image's file name, deployRamdisk
// ([conductor]deploy_ramdisk) for a node without images of its own.
func agentKind(n *baremetal.Node, configured, deployRamdisk string) (string, error) {
	kind := configured
	if raw, ok := n.DriverInfo[AgentKey]; ok {
		s, isString := raw.(string)
		if !isString || (s != AgentAuto && s != AgentIPA && s != AgentFerro) {
			return "", fmt.Errorf("%w: driver_info[%s] = %v is not one of %s, %s, %s",
				driver.ErrInvalidParameter, AgentKey, raw, AgentAuto, AgentIPA, AgentFerro)
		}
		kind = s
	}
	switch kind {
	case AgentIPA, AgentFerro:
		return kind, nil
	case AgentAuto, "":
	default:
		return "", fmt.Errorf("%w: [inspector]agent %q is not one of %s, %s, %s", driver.ErrInvalidParameter, kind, AgentAuto, AgentIPA, AgentFerro)
	}
	images := []any{n.DriverInfo["deploy_ramdisk"], n.DriverInfo["deploy_iso"]}
	if _, ok := n.DriverInfo["deploy_kernel"]; !ok {
		images = append(images, deployRamdisk)
	}
	for _, img := range images {
		if s, ok := img.(string); ok && IsFerroAgentImage(s) {
			return AgentFerro, nil
		}
	}
	return AgentIPA, nil
}

// IsFerroAgentImage reports whether an image reference (a path or a URL)
// names an image `ferro ramdisk build` made: its file name starts with
// "ferro-agent" (ferro-agent.initramfs, ferro-agent.iso).
func IsFerroAgentImage(ref string) bool {
	if u, err := url.Parse(ref); err == nil && u.Path != "" {
		ref = u.Path
	}
	return strings.HasPrefix(path.Base(ref), AgentFerro)
}

// reservedParams are the kernel parameters ferro sets itself.
var reservedParams = []string{CallbackParam, TokenParam, APIURLParam}

// extraParams parses configured ([inspector]extra_kernel_params), then
// driver_info[inspector_extra_kernel_params], in that order.
func extraParams(n *baremetal.Node, configured string) (driver.RamdiskParams, error) {
	params, err := ParseKernelParams(configured)
	if err != nil {
		return nil, fmt.Errorf("%w: [inspector]extra_kernel_params: %v", driver.ErrInvalidParameter, err)
	}
	if raw, ok := n.DriverInfo[ExtraKernelParamsKey]; ok {
		s, isString := raw.(string)
		if !isString {
			return nil, fmt.Errorf("%w: driver_info[%s] must be a string", driver.ErrInvalidParameter, ExtraKernelParamsKey)
		}
		node, err := ParseKernelParams(s)
		if err != nil {
			return nil, fmt.Errorf("%w: driver_info[%s]: %v", driver.ErrInvalidParameter, ExtraKernelParamsKey, err)
		}
		params = append(params, node...)
	}
	for _, p := range params {
		for _, r := range reservedParams {
			if p.Key == r {
				return nil, fmt.Errorf("%w: kernel parameter %s is set by ferro and cannot be given", driver.ErrInvalidParameter, p.Key)
			}
		}
	}
	return params, nil
}

// ramdiskParams are the extra kernel parameters and, for an agent that
// presents one, a new callback token on the command line: the params,
// the agent and the token ("" for none). A failure is a PhaseError.
func ramdiskParams(n *baremetal.Node, extra, agentOpt, deployRamdisk string) (driver.RamdiskParams, string, string, error) {
	params, err := extraParams(n, extra)
	if err != nil {
		return nil, "", "", &driver.PhaseError{Phase: "parsing kernel parameters", Err: err}
	}
	agent, err := agentKind(n, agentOpt, deployRamdisk)
	if err != nil {
		return nil, "", "", &driver.PhaseError{Phase: "choosing the agent", Err: err}
	}
	// A token only for an agent that presents it: the stock agent cannot,
	// and its report is matched by MAC and BMC address as upstream.
	var token string
	if agent == AgentFerro {
		if token, err = newToken(); err != nil {
			return nil, "", "", &driver.PhaseError{Phase: "generating the callback token", Err: err}
		}
		params = append(params, driver.RamdiskParam{Key: TokenParam, Value: token})
	}
	return params, agent, token, nil
}

// poweredOnDetail is the history detail of the managed power-on.
func poweredOnDetail(agent, token string) string {
	if token != "" {
		return "ramdisk for " + agent + ", callback token required"
	}
	return "ramdisk for " + agent + ", no callback token"
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// tokenHash is what is kept of a callback token: its SHA-256, hex.
func tokenHash(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// TokenMatches reports, in constant time, whether token is the one whose
// hash was kept; an empty token never is.
func TokenMatches(hash, token string) bool {
	if token == "" || hash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(tokenHash(token)), []byte(hash)) == 1
}
