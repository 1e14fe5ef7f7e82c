package ironic

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/ferrometal/ferro/internal/store"
)

// driverInterfaceMin is when each interface kind appears in a driver's
// detailed view.
var driverInterfaceMin = map[string]int{
	"bios": v40BIOSInterface, "boot": 0, "console": 0, "deploy": 0, "inspect": 0,
	"management": 0, "network": 0, "power": 0, "raid": 0, "rescue": v38RescueInterface,
	"storage": v33StorageInterface, "vendor": 0, "firmware": v86FirmwareInterface,
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

// getDriverProperties is GET /v1/drivers/{driver}/properties: the
// driver_info keys the hardware type reads, as its folder describes them
// (driver.Registry.Properties).
func (s *server) getDriverProperties(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	name := rq.r.PathValue("driver")
	list, ok := s.cond.Registry().Properties(name)
	if !ok {
		return driverNotFound(name)
	}
	props := make(map[string]any, len(list))
	for _, p := range list {
		props[p.Name] = p.Description
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
