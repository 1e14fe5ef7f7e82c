package ipmi

import "github.com/ferrometal/ferro/internal/driver"

// HardwareType is ipmi, with Ironic's supported interfaces and defaults and
// the driver_info keys parseDriverInfo reads.
var HardwareType = driver.HardwareType{
	Name: "ipmi",
	Supported: driver.SharedInterfaces(map[string][]string{
		"boot": {"ipxe", "pxe"}, "management": {Name}, "power": {Name},
		"vendor": {Name, "no-vendor"}, "inspect": {"agent", "inspector", "no-inspect"},
	}),
	Interfaces: []string{Name},
	// Ironic's ipmitool descriptions, word for word.
	Properties: []driver.Property{
		{Name: "ipmi_address", Description: "IP address or hostname of the node. Required.", Required: true},
		{Name: "ipmi_username", Description: "username; default is NULL user. Optional."},
		{Name: "ipmi_password", Description: "password. Optional.", Secret: true},
		{Name: "ipmi_port", Description: "remote IPMI RMCP port. Optional."},
		{Name: "ipmi_priv_level", Description: "privilege level; default is ADMINISTRATOR. One of ADMINISTRATOR, CALLBACK, OPERATOR, USER. Optional."},
		{Name: "ipmi_protocol_version", Description: "the version of the IPMI protocol; default is \"2.0\". One of \"1.5\", \"2.0\". Optional."},
		{Name: "ipmi_bridging", Description: "bridging_type; default is \"no\". One of \"single\", \"dual\", \"no\". Optional."},
		{Name: "ipmi_cipher_suite", Description: "The number of a cipher suite to use. Only 3 (AES-128 with SHA1) or 17 (AES-128 with SHA256) should ever be used; 17 is preferred. The default value depends on the ipmitool version, some recent versions have switched from 3 to 17. Optional."},
		{Name: "ipmi_terminal_port", Description: "node's UDP port to connect to. Only required for console access."},
	},
}
