package ironic

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/ferrometal/ferro/internal/store"
)

// driverInterfaceMin is when each interface kind appears in a driver's
// detailed view; firmware (1.86) never does.
var driverInterfaceMin = map[string]int{
	"bios": v40BIOSInterface, "boot": 0, "console": 0, "deploy": 0, "inspect": 0,
	"management": 0, "network": 0, "power": 0, "raid": 0, "rescue": v38RescueInterface,
	"storage": v33StorageInterface, "vendor": 0,
}

// appendDriver appends a hardware type's view.
func (s *server) appendDriver(b []byte, name string, hosts []string, rq *request, detail bool) []byte {
	o := newObj(b)
	o.str("name", name)
	o.key("hosts")
	o.b = appendStrings(o.b, hosts)
	o.key("links")
	o.b = appendLinks(o.b, rq.base, "drivers", name)
	if rq.minor >= v14StatesLinks {
		o.key("properties")
		o.b = appendSubLinks(o.b, rq.base, "drivers", name, "/properties")
	}
	if rq.minor >= v30DynamicDrivers {
		o.str("type", "dynamic")
		if detail {
			reg := s.cond.Registry()
			for _, kind := range apiInterfaceKinds {
				if rq.minor < driverInterfaceMin[kind] {
					continue
				}
				enabled := reg.EnabledFor(name, kind)
				def, err := reg.DefaultInterface(name, kind)
				o.key("default_" + kind + "_interface")
				if err != nil {
					o.b = append(o.b, "null"...)
				} else {
					o.b = appendString(o.b, def)
				}
				if enabled == nil {
					enabled = []string{}
				}
				o.key("enabled_" + kind + "_interfaces")
				o.b = appendStrings(o.b, enabled)
			}
		}
	}
	return o.end()
}

// listDrivers is GET /v1/drivers.
func (s *server) listDrivers(rq *request) error {
	a, err := rq.queryArgs("type", "detail")
	if err != nil {
		return err
	}
	detail, err := a.boolean("detail")
	if err != nil {
		return err
	}
	if detail != nil && rq.minor < v30DynamicDrivers {
		return notAcceptableMin(v30DynamicDrivers)
	}
	typ, hasType := a.optStr("type")
	if hasType && rq.minor < v30DynamicDrivers {
		return notAcceptableMin(v30DynamicDrivers)
	}
	if hasType && typ != "classic" && typ != "dynamic" {
		return badRequest("\"type\" filter must be one of \"classic\" or \"dynamic\", if specified.")
	}
	var names []string
	if typ != "classic" {
		names = s.cond.Registry().HardwareTypeNames()
	}
	c := s.conductorSnapshot()
	b := append(make([]byte, 0, 1024*len(names)+32), `{"drivers": [`...)
	first := true
	for _, name := range names {
		hosts := c.hostsFor(s, name)
		if len(hosts) == 0 {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = s.appendDriver(b, name, hosts, rq, detail != nil && *detail)
	}
	return rq.writeJSON(http.StatusOK, append(b, "]}"...))
}

func driverNotFound(name string) *apiError {
	return notFound("Could not find the following driver(s) or hardware type(s): %s.", name)
}

// getDriver is GET /v1/drivers/{driver}.
func (s *server) getDriver(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	name := rq.r.PathValue("driver")
	if _, ok := s.cond.Registry().HardwareType(name); !ok {
		return driverNotFound(name)
	}
	hosts := s.conductorSnapshot().hostsFor(s, name)
	if len(hosts) == 0 {
		return driverNotFound(name)
	}
	return rq.writeJSON(http.StatusOK, s.appendDriver(make([]byte, 0, 2048), name, hosts, rq, true))
}

// driverProperties describes the driver_info keys each interface reads,
// as Ironic's GET /v1/drivers/{driver}/properties lists them.
var driverProperties = map[string]map[string]string{
	"common": {
		"deploy_kernel":                 "UUID (from Glance) of the deployment kernel. Required.",
		"deploy_ramdisk":                "UUID (from Glance) of the ramdisk with agent that is used at deploy time. Required.",
		"inspector_extra_kernel_params": "Extra kernel parameters for the inspection ramdisk, appended after [inspector]extra_kernel_params. Optional.",
		"inspection_network":            "Neutron network (UUID or name) to put the node's ports on during inspection. Optional.",
		"force_persistent_boot_device":  "Controls the persistency of boot order changes. 'Always' will make all changes persistent, 'Default' will make all but the final one upon instance deployment non-persistent, and 'Never' will make no persistent changes at all. The old values 'True' and 'False' are still supported but deprecated in favor of the new ones.Defaults to 'Default'. Optional.",
		"bootloader":                    "URL or Glance UUID of the EFI system partition image containing EFI boot loader. Optional.",
		"kernel_append_params":          "Additional kernel parameters to pass down to instance kernel. These parameters can be consumed by the kernel or by the applications by reading /proc/cmdline. Mind severe cmdline size limit. Overrides [pxe]/kernel_append_params ironic option. Optional.",
		"deploy_forces_oob_reboot":      "Whether Ironic should force a reboot of the Node via the out-of-band channel after deployment is complete. Provides compatibility with older deploy ramdisks. Defaults to False. Optional.",
		"cleaning_network":              "Neutron network UUID or name for the ramdisk to be booted into for cleaning nodes. Required for \"neutron\" network interface. It is also required if cleaning nodes when using \"flat\" network interface or \"neutron\" DHCP provider. If a name is provided, it must be unique among all networks or cleaning will fail.",
		"provisioning_network":          "Neutron network UUID or name for the ramdisk to be booted into for provisioning nodes. Required for \"neutron\" network interface. If a name is provided, it must be unique among all networks or deploy will fail.",
		"agent_verify_ca":               "Either a Boolean value, a path to a CA_BUNDLE file or directory with certificates of trusted CAs. If set to True ironic will verify the agent's certificate; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the specified certificate or one of the certificates in the directory. Defaults to True. Optional",
	},
	"ipmi": {
		"ipmi_address":          "IP address or hostname of the node. Required.",
		"ipmi_username":         "username; default is NULL user. Optional.",
		"ipmi_password":         "password. Optional.",
		"ipmi_port":             "remote IPMI RMCP port. Optional.",
		"ipmi_priv_level":       "privilege level; default is ADMINISTRATOR. One of ADMINISTRATOR, CALLBACK, OPERATOR, USER. Optional.",
		"ipmi_protocol_version": "the version of the IPMI protocol; default is \"2.0\". One of \"1.5\", \"2.0\". Optional.",
		"ipmi_bridging":         "bridging_type; default is \"no\". One of \"single\", \"dual\", \"no\". Optional.",
		"ipmi_cipher_suite":     "The number of a cipher suite to use. Only 3 (AES-128 with SHA1) or 17 (AES-128 with SHA256) should ever be used; 17 is preferred. The default value depends on the ipmitool version, some recent versions have switched from 3 to 17. Optional.",
		"ipmi_terminal_port":    "node's UDP port to connect to. Only required for console access.",
	},
	"redfish": {
		"redfish_address":    "The URL address to the Redfish controller. It must include the authority portion of the URL. If the scheme is missing, https is assumed. For example: https://mgmt.vendor.com. Required",
		"redfish_system_id":  "The canonical path to the ComputerSystem resource that the driver will interact with. It should include the root service, version and the unique resource path to a ComputerSystem within the same authority as the redfish_address property. For example: /redfish/v1/Systems/1. This property is only required if target BMC manages more than one ComputerSystem. Otherwise ironic will pick the only available ComputerSystem automatically. Optional",
		"redfish_username":   "User account with admin/server-profile access privilege. Although this property is not mandatory it's highly recommended to set a username. Optional",
		"redfish_password":   "User account password. Although this property is not mandatory, it's highly recommended to set a password. Optional",
		"redfish_verify_ca":  "Either a Boolean value, a path to a CA_BUNDLE file or directory with certificates of trusted CAs. If set to True the driver will verify the host certificates; if False the driver will ignore verifying the SSL certificate. If it's a path the driver will use the specified certificate or one of the certificates in the directory. Defaults to True. Optional",
		"redfish_auth_type":  "Redfish HTTP client authentication method. Can be \"basic\", \"session\" or \"auto\". The \"auto\" mode first tries \"session\" and falls back to \"basic\" if session authentication is not supported by the Redfish BMC. Default is set in ironic config as [redfish]auth_type. Optional",
		"redfish_kernel_id":  "URL or Glance UUID of the deployment kernel for virtual media boot. Optional",
		"redfish_ramdisk_id": "URL or Glance UUID of the deployment ramdisk for virtual media boot. Optional",
		"redfish_deploy_iso": "URL or Glance UUID of the deployment ISO. Optional",
	},
}

// getDriverProperties is GET /v1/drivers/{driver}/properties.
func (s *server) getDriverProperties(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	name := rq.r.PathValue("driver")
	if _, ok := s.cond.Registry().HardwareType(name); !ok {
		return driverNotFound(name)
	}
	props := map[string]any{}
	for k, v := range driverProperties["common"] {
		props[k] = v
	}
	for k, v := range driverProperties[name] {
		props[k] = v
	}
	if name == "fake-hardware" {
		for _, hw := range []string{"ipmi", "redfish"} {
			for k, v := range driverProperties[hw] {
				props[k] = v
			}
		}
	}
	return rq.writeJSON(http.StatusOK, appendMap(make([]byte, 0, 4096), props, nil))
}

// listShards is GET /v1/shards (1.82): each shard with its node count.
func (s *server) listShards(rq *request) error {
	if rq.minor < v82Shard {
		return resourceNotFound()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	nodes, err := s.store.ListNodes(rq.ctx(), store.NodeFilter{})
	if err != nil {
		return err
	}
	counts := map[string]int{}
	var names []string
	var none int
	for _, n := range nodes {
		if n.Shard == "" {
			none++
			continue
		}
		if counts[n.Shard] == 0 {
			names = append(names, n.Shard)
		}
		counts[n.Shard]++
	}
	slices.Sort(names)
	b := append(make([]byte, 0, 64*len(names)+32), `{"shards": [`...)
	for i, name := range names {
		if i > 0 {
			b = append(b, ", "...)
		}
		o := newObj(b)
		o.str("name", name)
		o.key("count")
		o.b = append(o.b, strconv.Itoa(counts[name])...)
		b = o.end()
	}
	if none > 0 {
		if len(names) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, `{"name": "None", "count": `...)
		b = append(b, strconv.Itoa(none)...)
		b = append(b, '}')
	}
	return rq.writeJSON(http.StatusOK, append(b, "]}"...))
}

// logicalDiskProperties describes the keys of a logical disk in a target
// RAID configuration: the keys of Ironic's RAID configuration schema, in
// ferro's words.
var logicalDiskProperties = map[string]any{
	"raid_level":               "RAID level of the logical disk: JBOD, 0, 1, 2, 5, 6, 1+0, 5+0 or 6+0. Required.",
	"size_gb":                  "Size of the logical disk in GiB (an integer), or MAX for the rest of the space. Required.",
	"volume_name":              "Name of the volume; generated when not given. Optional.",
	"is_root_volume":           "Whether this logical disk is the root volume (default false). Optional.",
	"share_physical_disks":     "Whether other logical disks may use the same physical disks (default false). Optional.",
	"disk_type":                "Preferred disk type: hdd or ssd; any when not given. Optional.",
	"interface_type":           "Preferred disk interface: sata, scsi or sas; any when not given. Optional.",
	"number_of_physical_disks": "How many physical disks to use; the RAID level's minimum when not given. Optional.",
	"controller":               "RAID controller to use; chosen by the driver when not given. Optional.",
	"physical_disks":           "Physical disks to use, as the RAID interface names them; chosen by the driver when not given. Optional.",
}

// getLogicalDiskProperties is GET /v1/drivers/{driver}/raid/logical_disk_properties (1.12).
func (s *server) getLogicalDiskProperties(rq *request) error {
	if rq.minor < v12RAIDConfig {
		return notAcceptable()
	}
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	name := rq.r.PathValue("driver")
	if _, ok := s.cond.Registry().HardwareType(name); !ok {
		return driverNotFound(name)
	}
	return rq.writeJSON(http.StatusOK, appendMap(make([]byte, 0, 2048), logicalDiskProperties, nil))
}
