// Package inventory is the wire schema of the hardware report that the
// in-RAM agent posts to the inspector: the ironic-python-agent (IPA)
// inspection payload, with its field names and types, plus a strict but
// tolerant decoder for it.
//
// The package is shared by the agent and the inspector, so it imports nothing
// but the standard library.
package inventory

import "encoding/json"

// Report is the whole payload the agent posts to the inspection callback.
// IPA sends the first group of fields always, the second one only when the
// matching collector runs.
type Report struct {
	Inventory     *Inventory     `json:"inventory"`
	RootDisk      *Disk          `json:"root_disk,omitempty"`
	BootInterface string         `json:"boot_interface,omitempty"` // raw BOOTIF, e.g. "01-aa-bb-cc-dd-ee-ff"
	Configuration *Configuration `json:"configuration,omitempty"`
	// Error is what the ramdisk reports as failed; nil or "" means success.
	Error *string `json:"error"`
	Logs  string  `json:"logs,omitempty"` // base64 of a gzipped tarball

	// LLDPRaw maps an interface name to the TLVs received on it.
	LLDPRaw      map[string][]TLV `json:"lldp_raw,omitempty"`
	PCIDevices   []PCIDevice      `json:"pci_devices,omitempty"`
	USBDevices   []USBDevice      `json:"usb_devices,omitempty"`
	Data         json.RawMessage  `json:"data,omitempty"` // extra-hardware collector, free-form
	NUMATopology json.RawMessage  `json:"numa_topology,omitempty"`
	DMI          json.RawMessage  `json:"dmi,omitempty"`

	// InspectionToken is a ferro extension: the per-inspection secret the
	// agent got on its kernel command line.
	InspectionToken string `json:"inspection_token,omitempty"`
}

// Configuration says which collectors and hardware managers produced the
// report.
type Configuration struct {
	Collectors []string  `json:"collectors"`
	Managers   []Manager `json:"managers"`
}

// Manager is one IPA hardware manager and its version.
type Manager struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Inventory is the hardware the agent found.
type Inventory struct {
	Interfaces []Interface `json:"interfaces"`
	CPU        *CPU        `json:"cpu,omitempty"`
	Disks      []Disk      `json:"disks"`
	Memory     *Memory     `json:"memory,omitempty"`
	// BMCAddress is "0.0.0.0" and BMCV6Address "::/0" when the agent could
	// not read them; see (*Inventory).BMCAddresses.
	BMCAddress   string        `json:"bmc_address,omitempty"`
	BMCV6Address string        `json:"bmc_v6address,omitempty"`
	BMCMAC       string        `json:"bmc_mac,omitempty"`
	SystemVendor *SystemVendor `json:"system_vendor,omitempty"`
	Boot         *Boot         `json:"boot,omitempty"`
	Hostname     string        `json:"hostname,omitempty"`
}

// Interface is a network interface.
type Interface struct {
	Name        string `json:"name"`
	MACAddress  string `json:"mac_address"`
	IPv4Address string `json:"ipv4_address,omitempty"`
	IPv6Address string `json:"ipv6_address,omitempty"`
	HasCarrier  bool   `json:"has_carrier"`
	// LLDP holds TLVs when the deprecated ipa-collect-lldp was set; the lldp
	// collector uses Report.LLDPRaw instead.
	LLDP        []TLV  `json:"lldp,omitempty"`
	Vendor      string `json:"vendor,omitempty"`
	Product     string `json:"product,omitempty"`
	ClientID    string `json:"client_id,omitempty"`
	BIOSDevName string `json:"biosdevname,omitempty"`
	SpeedMbps   int    `json:"speed_mbps,omitempty"`
	PCIAddress  string `json:"pci_address,omitempty"`
	Driver      string `json:"driver,omitempty"`
}

// CPU describes the processors. Frequency is a string in MHz, as IPA sends it.
type CPU struct {
	ModelName    string   `json:"model_name,omitempty"`
	Frequency    string   `json:"frequency,omitempty"`
	Count        int      `json:"count"`
	Architecture string   `json:"architecture,omitempty"`
	Flags        []string `json:"flags,omitempty"`
	SocketCount  int      `json:"socket_count,omitempty"`
}

// Disk is a block device. Size is in bytes.
type Disk struct {
	Name               string `json:"name"`
	Model              string `json:"model,omitempty"`
	Size               int64  `json:"size"`
	Rotational         bool   `json:"rotational"`
	WWN                string `json:"wwn,omitempty"`
	Serial             string `json:"serial,omitempty"`
	Vendor             string `json:"vendor,omitempty"`
	WWNWithExtension   string `json:"wwn_with_extension,omitempty"`
	WWNVendorExtension string `json:"wwn_vendor_extension,omitempty"`
	HCTL               string `json:"hctl,omitempty"`
	ByPath             string `json:"by_path,omitempty"`
	LogicalSectors     int    `json:"logical_sectors,omitempty"`
	PhysicalSectors    int    `json:"physical_sectors,omitempty"`
	Tran               string `json:"tran,omitempty"`
}

// Memory is the RAM: Total in bytes as the kernel sees it, PhysicalMB as
// the DIMMs add up.
type Memory struct {
	Total      int64 `json:"total"`
	PhysicalMB int   `json:"physical_mb"`
}

// SystemVendor is the machine's DMI identity.
type SystemVendor struct {
	ProductName  string    `json:"product_name,omitempty"`
	SerialNumber string    `json:"serial_number,omitempty"`
	Manufacturer string    `json:"manufacturer,omitempty"`
	Firmware     *Firmware `json:"firmware,omitempty"`
	// SKU is SMBIOS type 1's SKU Number. ferro-agent adds it; IPA does
	// not send it, and upstream's inspector keeps whatever a custom
	// hardware manager puts there, so a value that is not a string is
	// kept in the raw data and left out here rather than refused.
	SKU string `json:"sku,omitempty" inventory:"lenient"`
}

// Firmware is the system firmware (BIOS/UEFI) version.
type Firmware struct {
	Vendor    string `json:"vendor,omitempty"`
	Version   string `json:"version,omitempty"`
	BuildDate string `json:"build_date,omitempty"`
}

// Boot says how the ramdisk was booted.
type Boot struct {
	CurrentBootMode string `json:"current_boot_mode,omitempty"` // "bios" or "uefi"
	PXEInterface    string `json:"pxe_interface,omitempty"`
}

// PCIDevice is one entry of the pci-devices collector.
type PCIDevice struct {
	VendorID  string `json:"vendor_id"`
	ProductID string `json:"product_id"`
	Class     string `json:"class,omitempty"`
	Revision  string `json:"revision,omitempty"`
	Bus       string `json:"bus,omitempty"`
	// NUMANodeID is the device's NUMA node. IPA (9.8 and later) sends the
	// text of sysfs' numa_node, "0" or "-1" for none; ferro-agent sends an
	// integer. Both decode; any other value is left out here and kept in
	// the raw data, as Ironic and ironic-inspector take whatever comes.
	NUMANodeID *int `json:"numa_node_id,omitempty" inventory:"lenient,intstring"`
}

// USBDevice is one entry of the usb-devices collector (from lshw).
type USBDevice struct {
	Product string `json:"product,omitempty"`
	Vendor  string `json:"vendor,omitempty"`
	Handle  string `json:"handle,omitempty"`
}
