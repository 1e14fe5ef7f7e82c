// Package callback holds the wire names shared by the conductor, the
// inspector and the agent for the ramdisk's callback: the kernel parameters
// the ramdisk boots with, the header that carries the per-inspection
// token, and the rule that turns the [inspector] options into the callback
// URL (Settings.Resolve). It imports only the standard library, so the agent can use it
// without linking the server.
package callback

const (
	// URLParam is the kernel parameter with the URL the agent posts its
	// report to (ironic-python-agent's name).
	URLParam = "ipa-inspection-callback-url"
	// CollectorsParam is ironic-python-agent's list of inspection collectors.
	CollectorsParam = "ipa-inspection-collectors"
	// DebugParam turns on the agent's debug logging (ironic-python-agent's name).
	DebugParam = "ipa-debug"
	// TokenParam is the kernel parameter carrying the per-inspection callback
	// token, for agents that present it (ferro-agent; the stock
	// ironic-python-agent does not know it).
	TokenParam = "ferro-inspection-token"
	// TokenHeader carries the token: on the conductor's start request to the
	// inspector, and on the agent's report to /v1/continue.
	TokenHeader = "X-Ferro-Inspection-Token"
	// ContinuePath is appended to the inspector's base URL to form the callback URL.
	ContinuePath = "/v1/continue"
	// ContinueInspectionPath is appended to the bare metal API's base URL
	// to form the agent inspect interface's callback URL (Ironic's
	// /v1/continue_inspection).
	ContinueInspectionPath = "/v1/continue_inspection"
	// APIURLParam is the bare metal API's URL on the kernel command line,
	// for fast track (ironic-python-agent's ipa-api-url).
	APIURLParam = "ipa-api-url"
	// CollectLLDPParam makes ironic-python-agent collect LLDP on every NIC.
	CollectLLDPParam = "ipa-collect-lldp"
)

// ModuleList is where ferro's ramdisk lists the kernel modules its agent
// loads at start, one path per line in load order, relative to the
// ramdisk's root.
const ModuleList = "etc/ferro-agent/modules"
