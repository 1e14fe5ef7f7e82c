package redfish

import "github.com/ferrometal/ferro/internal/driver"

// HardwareType is redfish, with Ironic's supported interfaces and defaults
// (its out-of-band inspection first) and the driver_info keys of the
// redfish interfaces and of redfish-virtual-media (./vmedia).
var HardwareType = driver.HardwareType{
	Name: "redfish",
	Supported: driver.SharedInterfaces(map[string][]string{
		"boot": {"ipxe", "pxe", "redfish-virtual-media"}, "management": {"redfish"}, "power": {"redfish"},
		"inspect":  {"redfish", "agent", "inspector", "no-inspect"},
		"firmware": {"redfish", "no-firmware", "fake"},
		// Ironic's RedfishRAID: ferro stores and validates RAID settings,
		// it builds no arrays.
		"raid": {"redfish", "no-raid", "agent", "fake"},
	}),
	Interfaces: []string{"redfish", "redfish-virtual-media"},
	// Ironic's descriptions, word for word.
	Properties: []driver.Property{
		{Name: "redfish_address", Required: true, Description: "The URL address to the Redfish controller. It must include the authority portion of the URL. If the scheme is missing, https is assumed. For example: https://mgmt.vendor.com. Required"},
		{Name: "redfish_system_id", Description: "The canonical path to the ComputerSystem resource that the driver will interact with. It should include the root service, version and the unique resource path to a ComputerSystem within the same authority as the redfish_address property. For example: /redfish/v1/Systems/1. This property is only required if target BMC manages more than one ComputerSystem. Otherwise ironic will pick the only available ComputerSystem automatically. Optional"},
		{Name: "redfish_username", Description: "User account with admin/server-profile access privilege. Although this property is not mandatory it's highly recommended to set a username. Optional"},
		{Name: "redfish_password", Secret: true, Description: "User account password. Although this property is not mandatory, it's highly recommended to set a password. Optional"},
		{Name: "redfish_verify_ca", Description: "Either a Boolean value, a path to a CA_BUNDLE file or directory with certificates of trusted CAs. If set to True the driver will verify the host certificates; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the specified certificate or one of the certificates in the directory. Defaults to True. Optional"},
		{Name: "redfish_auth_type", Description: "Redfish HTTP client authentication method. Can be \"basic\", \"session\" or \"auto\". The \"auto\" mode first tries \"session\" and falls back to \"basic\" if session authentication is not supported by the Redfish BMC. Default is set in ironic config as [redfish]auth_type. Optional"},
		{Name: "redfish_kernel_id", Description: "URL or Glance UUID of the deployment kernel for virtual media boot. Optional"},
		{Name: "redfish_ramdisk_id", Description: "URL or Glance UUID of the deployment ramdisk for virtual media boot. Optional"},
		{Name: "redfish_deploy_iso", Description: "URL or Glance UUID of the deployment ISO. Optional"},
	},
}
