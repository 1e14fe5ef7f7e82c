package ironic

import (
	"net/http"
	"strconv"
	"strings"
)

// Microversions: ferro serves 1.1 to 1.115, the range of Ironic master. A
// request without a version header is served as 1.1, as Ironic does.
const (
	minMinor = 1
	maxMinor = 115

	minVersionString = "1.1"
	maxVersionString = "1.115"
)

// Minor versions that change behaviour, named as in Ironic's versions.py.
const (
	v2AvailableState        = 2
	v3DriverInternalInfo    = 3
	v4ManageableState       = 4
	v5NodeName              = 5
	v6InspectState          = 6
	v7NodeClean             = 7
	v8FieldsSubset          = 8
	v9ProvisionStateFilter  = 9
	v10UnrestrictedNodeName = 10
	v11EnrollState          = 11
	v12RAIDConfig           = 12
	v13AbortVerb            = 13
	v14StatesLinks          = 14
	v15ManualClean          = 15
	v16DriverFilter         = 16
	v17AdoptVerb            = 17
	v18PortInternalInfo     = 18
	v19PortAdvancedNet      = 19
	v20NetworkInterface     = 20
	v21ResourceClass        = 21
	v23Portgroups           = 23
	v24PortgroupSubcontrol  = 24
	v26PortgroupMode        = 26
	v27SoftPowerOff         = 27
	v28VIFs                 = 28
	v30DynamicDrivers       = 30
	v31DynamicInterfaces    = 31
	v32Volume               = 32
	v33StorageInterface     = 33
	v34PortPhysicalNetwork  = 34
	v37NodeTraits           = 37
	v38RescueInterface      = 38
	v39InspectWait          = 39
	v40BIOSInterface        = 40
	v41InspectAbort         = 41
	v42Fault                = 42
	v43DetailQuery          = 43
	v44DeployStep           = 44
	v45ResetInterfaces      = 45
	v46ConductorGroup       = 46
	v47AutomatedClean       = 47
	v48Protected            = 48
	v49Conductors           = 49
	v50Owner                = 50
	v51Description          = 51
	v52Allocation           = 52
	v53SmartNIC             = 53
	v55DeployTemplates      = 55
	v57AllocationUpdate     = 57
	v58AllocationBackfill   = 58
	v60AllocationOwner      = 60
	v61Retired              = 61
	v64NetworkType          = 64
	v65Lessee               = 65
	v66NetworkData          = 66
	v69DeploySteps          = 69
	v70CleanDisableRamdisk  = 70
	v73DeployVerbs          = 73
	v75BootMode             = 75
	v78NodeHistory          = 78
	v81NodeInventory        = 81
	v82Shard                = 82
	v83ParentNode           = 83
	v85UnholdVerb           = 85
	v86FirmwareInterface    = 86
	v87Service              = 87
	v89AttachDetachVmedia   = 89
	v93GetVmedia            = 93
	v95DisablePowerOff      = 95
	v104InstanceName        = 104
	v107RequestIDHeader     = 107
	v108ServiceNoRamdisk    = 108
	v109Health              = 109
	v110DeployWaitAbort     = 110
	v113HistoryProject      = 113
	v114FirmwareIdentity    = 114
	v115HistoryFields       = 115
)

// Minor versions of Ironic master after 21.4's 1.82 (versions.py).
const (
	v88PortName           = 88
	v90OVNVTEP            = 90
	v91DotJSON            = 91
	v92Runbooks           = 92
	v94PortNodeName       = 94
	v96InspectionRules    = 96
	v97PortDescription    = 97
	v100PortVendor        = 100
	v101PortCategory      = 101
	v102PortgroupPhysnet  = 102
	v103PortgroupCategory = 103
	v105RemoveOVNVTEP     = 105
	v106PortgroupShard    = 106
	v111DynamicPortgroup  = 111
	v112RunbookTraits     = 112
)

// Canonical header names (Go canonicalises incoming headers the same way).
const (
	hdrVersion        = "X-Openstack-Ironic-Api-Version"
	hdrMinVersion     = "X-Openstack-Ironic-Api-Minimum-Version"
	hdrMaxVersion     = "X-Openstack-Ironic-Api-Maximum-Version"
	hdrOpenStackAPI   = "Openstack-Api-Version"
	hdrRequestID      = "X-Openstack-Request-Id"
	hdrCompatID       = "Openstack-Request-Id" // Ironic's older name, still sent (1.107)
	hdrContentType    = "Content-Type"
	hdrContentLength  = "Content-Length"
	hdrVary           = "Vary"
	hdrLocation       = "Location"
	varyVersionHeader = "X-OpenStack-Ironic-API-Version"
)

// versionStrings holds "1.N" for every served minor, so responses do not
// format numbers.
var versionStrings = func() [maxMinor + 1]string {
	var s [maxMinor + 1]string
	for i := range s {
		s[i] = "1." + strconv.Itoa(i)
	}
	return s
}()

var baremetalVersionStrings = func() [maxMinor + 1]string {
	var s [maxMinor + 1]string
	for i := range s {
		s[i] = "baremetal 1." + strconv.Itoa(i)
	}
	return s
}()

// requestedVersion returns the requested minor version, from
// X-OpenStack-Ironic-API-Version or else from
// "OpenStack-API-Version: baremetal X.Y". A malformed or unsupported
// version is a 406 with Ironic's message.
func requestedVersion(h http.Header) (int, *apiError) {
	var v string
	if vs := h[hdrVersion]; len(vs) > 0 {
		v = strings.TrimSpace(vs[0])
	} else if vs := h[hdrOpenStackAPI]; len(vs) > 0 {
		for _, part := range strings.Split(vs[0], ",") {
			service, ver, ok := strings.Cut(strings.TrimSpace(part), " ")
			if ok && strings.EqualFold(service, "baremetal") {
				v = strings.TrimSpace(ver)
			}
		}
	}
	if v == "" {
		return minMinor, nil
	}
	if strings.EqualFold(v, "latest") {
		return maxMinor, nil
	}
	majS, minS, ok := strings.Cut(v, ".")
	major, err1 := strconv.Atoi(majS)
	minor, err2 := strconv.Atoi(minS)
	if !ok || err1 != nil || err2 != nil || strings.Contains(minS, ".") {
		return 0, newError(http.StatusNotAcceptable, "Invalid value for X-OpenStack-Ironic-API-Version header")
	}
	if major != 1 {
		return 0, newError(http.StatusNotAcceptable,
			"Mutually exclusive versions requested. Version %d.%d requested but not supported by this service. The supported version range is: [%s, %s].",
			major, minor, minVersionString, maxVersionString)
	}
	if minor < minMinor || minor > maxMinor {
		return 0, newError(http.StatusNotAcceptable,
			"Version %d.%d was requested but the minor version is not supported by this service. The supported version range is: [%s, %s].",
			major, minor, minVersionString, maxVersionString)
	}
	return minor, nil
}

// versionObject appends Ironic's description of API v1 (default_version
// and the entries of versions).
func versionObject(b []byte, base string) []byte {
	o := newObj(b)
	o.str("id", "v1")
	o.raw("links", appendLinkList(nil, []link{{rel: "self", href: base + "/v1/"}}))
	o.str("status", "CURRENT")
	o.str("min_version", minVersionString)
	o.str("version", maxVersionString)
	return o.end()
}

// getRoot is GET /: the API's name and its one version.
func (s *server) getRoot(rq *request) error {
	o := newObj(make([]byte, 0, 512))
	o.str("name", "OpenStack Ironic API")
	o.str("description", "Ironic is an OpenStack project which enables the provision and management of baremetal machines.")
	o.key("default_version")
	o.b = versionObject(o.b, rq.base)
	o.key("versions")
	o.b = append(o.b, '[')
	o.b = versionObject(o.b, rq.base)
	o.b = append(o.b, ']')
	return rq.writeJSON(http.StatusOK, o.end())
}

// getV1 is GET /v1: media types and links to the resources the requested
// version has.
func (s *server) getV1(rq *request) error {
	base := rq.base
	o := newObj(make([]byte, 0, 2048))
	o.str("id", "v1")
	o.raw("links", appendLinkList(nil, []link{
		{rel: "self", href: base + "/v1/"},
	}))
	// The describedby link carries a type; write it by hand.
	o.b = o.b[:len(o.b)-1] // drop the closing bracket
	o.b = append(o.b, `, {"href": "https://docs.openstack.org//ironic/latest/contributor//webapi.html", "rel": "describedby", "type": "text/html"}]`...)
	o.raw("media_types", []byte(`[{"base": "application/json", "type": "application/vnd.openstack.ironic.v1+json"}]`))
	res := func(name string) {
		o.key(name)
		o.b = appendLinkList(o.b, []link{
			{rel: "self", href: base + "/v1/" + name + "/"},
			{rel: "bookmark", href: base + "/" + name + "/"},
		})
	}
	res("chassis")
	res("nodes")
	res("ports")
	if rq.minor >= v23Portgroups {
		res("portgroups")
	}
	res("drivers")
	if rq.minor >= v49Conductors {
		res("conductors")
	}
	if rq.minor >= v52Allocation {
		res("allocations")
	}
	if rq.minor >= v82Shard {
		res("shards")
	}
	// Ironic's VERSIONED_CONTROLLERS that ferro serves (not lookup and
	// events, which it has not).
	if rq.minor >= v22Heartbeat {
		res("heartbeat")
	}
	if rq.minor >= v32Volume {
		res("volume")
	}
	if rq.minor >= v55DeployTemplates {
		res("deploy_templates")
	}
	if rq.minor >= v92Runbooks {
		res("runbooks")
	}
	if rq.minor >= v84ContinueInspection {
		res("continue_inspection")
	}
	if rq.minor >= v96InspectionRules {
		res("inspection_rules")
	}
	o.key("version")
	o.b = versionObject(o.b, base)
	return rq.writeJSON(http.StatusOK, o.end())
}
