package redfish

// Auth types of driver_info[redfish_auth_type], as Ironic's.
const (
	AuthBasic   = "basic"
	AuthSession = "session"
	AuthAuto    = "auto"
)

// Endpoint is one BMC and the System on it: what the redfish driver
// parses a node's driver_info into (driver/redfish.ParseDriverInfo).
type Endpoint struct {
	// Address is scheme://host[:port], without a path.
	Address string
	// SystemID is the System's path (/redfish/v1/Systems/1) or member Id;
	// empty means the only System the service has.
	SystemID string
	Username string
	Password string
	// Insecure skips TLS verification (redfish_verify_ca=false).
	Insecure bool
	// CAFile is a CA bundle to verify the BMC with, instead of the system's.
	CAFile   string
	AuthType string
	// Secrets are the node's driver_info secrets (the keys its hardware
	// type marks Secret), removed, with the password, from whatever the
	// BMC sends back before it becomes an error or a log line.
	Secrets []string
}

// String names the BMC for messages; it never contains the password.
func (e Endpoint) String() string { return e.Address }
