// Package vbmc is the virtual BMC behind ferro-vbmc: one process serving many
// virtual machines, each with its own IPMI endpoint (go-ipmi's server, one UDP
// port per machine) and all of them behind one Redfish service. A machine's
// state lives in a Machine; what powering it on means is up to its Backend
// (fake: state in memory; qemu: a QEMU process).
package vbmc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
)

// Config is ferro-vbmc's JSON configuration file.
type Config struct {
	// Username and Password are the credentials of every BMC (IPMI user 2
	// with the ADMINISTRATOR privilege, Redfish basic and session auth).
	Username string `json:"username"`
	Password string `json:"password"`
	// Redfish is the one Redfish service for all machines.
	Redfish RedfishConfig `json:"redfish"`
	// StateDir holds what the machines need on disk: virtual media images,
	// disk images, QMP sockets, console logs. Empty: a temporary directory,
	// removed at exit.
	StateDir string `json:"state_dir,omitempty"`
	// MaxImageMB bounds the size of a virtual media image fetched on insert
	// (default 2048).
	MaxImageMB int `json:"max_image_mb,omitempty"`
	// RequestLog records, per machine, every IPMI chassis command and
	// Redfish request (the last 4096), served with each machine's state at
	// GET /ferro-vbmc/v1/machines (BMC credentials). For tests.
	RequestLog bool `json:"request_log,omitempty"`
	// Machines are the virtual machines, each with its BMC.
	Machines []MachineConfig `json:"machines"`
}

// RedfishConfig configures the Redfish listener.
type RedfishConfig struct {
	// Listen is host:port (port 0 picks a free one; the ready line says which).
	Listen string `json:"listen"`
}

// MachineConfig describes one virtual machine.
type MachineConfig struct {
	// Name is the machine's Redfish System and Manager id.
	Name string `json:"name"`
	// Backend is "fake" or "qemu".
	Backend string `json:"backend"`
	// IPMIListen is the UDP host:port of the machine's IPMI endpoint (port 0
	// picks a free one). Empty: no IPMI for this machine.
	IPMIListen string `json:"ipmi_listen,omitempty"`
	// CPUs is the number of logical CPUs.
	CPUs int `json:"cpus"`
	// MemoryMB is the memory size, a multiple of 1024 (Redfish reports GiB).
	MemoryMB int `json:"memory_mb"`
	// MACs are the NICs' MAC addresses.
	MACs []string `json:"macs"`
	// DisksGB are the sizes of the machine's disks.
	DisksGB []int `json:"disks_gb"`
	// Manufacturer, Product and Serial are reported by Redfish and given to
	// QEMU as SMBIOS type 1 (defaults: "ferro", "ferro-vbmc", the name).
	Manufacturer string `json:"manufacturer,omitempty"`
	Product      string `json:"product,omitempty"`
	Serial       string `json:"serial,omitempty"`
	// SKU is Redfish's SKU and QEMU's SMBIOS type 1 SKU Number (none by
	// default).
	SKU string `json:"sku,omitempty"`
	// IPMIManufacturerID is the manufacturer ID (an IANA enterprise
	// number, e.g. 674 for Dell) IPMI's Get Device ID answers; 0, the
	// default, is "unknown".
	IPMIManufacturerID uint32 `json:"ipmi_manufacturer_id,omitempty"`
	// QEMU says how to start the VM (backend "qemu" only).
	QEMU *QEMUConfig `json:"qemu,omitempty"`
	// Faults make the machine's BMC misbehave, for tests of clients' error
	// paths.
	Faults *Faults `json:"faults,omitempty"`
}

// QEMUConfig says how the qemu backend starts a machine's VM.
type QEMUConfig struct {
	// Binary is the QEMU executable (default qemu-system-x86_64 from PATH).
	Binary string `json:"binary,omitempty"`
	// Machine is the QEMU machine type: "pc" (default) or "q35".
	Machine string `json:"machine,omitempty"`
	// Firmware is "bios" (SeaBIOS, default) or "uefi" (OVMF).
	Firmware string `json:"firmware,omitempty"`
	// OVMFCode and OVMFVars override Debian's OVMF 4M images for "uefi".
	OVMFCode string `json:"ovmf_code,omitempty"`
	OVMFVars string `json:"ovmf_vars,omitempty"`
	// Accel is "auto" (default: KVM only when it can run a stock kernel,
	// else TCG), "kvm" or "tcg".
	Accel string `json:"accel,omitempty"`
	// Taps names one tap device per MAC. Empty: each NIC gets QEMU's
	// user-mode network, restricted (no access to the host).
	Taps []string `json:"taps,omitempty"`
	// NICModel is the QEMU NIC device (default virtio-net-pci).
	NICModel string `json:"nic_model,omitempty"`
	// OnboardNICs describes the NICs as onboard Ethernet devices in SMBIOS
	// (type 41, instance = position from 1), so biosdevname-style names
	// are em1, em2, …
	OnboardNICs bool `json:"onboard_nics,omitempty"`
	// IPMIDevice adds an in-band BMC (ipmi-bmc-sim on isa-ipmi-kcs) so an
	// agent in the VM sees one.
	IPMIDevice bool `json:"ipmi_device,omitempty"`
	// ConsoleLog is the file the serial console is written to (default
	// <state_dir>/<name>/console.log).
	ConsoleLog string `json:"console_log,omitempty"`
	// ExtraArgs are appended to QEMU's command line.
	ExtraArgs []string `json:"extra_args,omitempty"`
}

// Backend names.
const (
	BackendFake = "fake"
	BackendQEMU = "qemu"
)

// Limits that keep a configuration (and the process serving it) sane.
const (
	maxMachines     = 4096
	maxCPUs         = 1024
	maxMemoryMB     = 16 << 20 // 16 TiB
	maxDisks        = 16
	maxDiskGB       = 64 << 10 // 64 TiB
	maxNICs         = 16
	maxConfigBytes  = 4 << 20
	maxIPMIPassword = 20 // IPMI 2.0; v1.5 (-I lan) takes at most 16
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// LoadConfig reads and validates the JSON configuration file at path.
func LoadConfig(path string) (Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return Config{}, fmt.Errorf("read config %s: %w", path, err)
	}
	if len(data) > maxConfigBytes {
		return Config{}, fmt.Errorf("config %s: larger than %d bytes", path, maxConfigBytes)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig decodes a JSON configuration strictly (unknown fields are
// errors), fills in defaults and validates it.
func ParseConfig(data []byte) (Config, error) {
	var cfg Config
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("decode JSON: %w", err)
	}
	if dec.More() {
		return Config{}, errors.New("decode JSON: trailing data after the configuration object")
	}
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func (c *Config) setDefaults() {
	if c.MaxImageMB == 0 {
		c.MaxImageMB = 2048
	}
	for i := range c.Machines {
		m := &c.Machines[i]
		if m.Manufacturer == "" {
			m.Manufacturer = "ferro"
		}
		if m.Product == "" {
			m.Product = "ferro-vbmc"
		}
		if m.Serial == "" {
			m.Serial = m.Name
		}
		if q := m.QEMU; q != nil {
			if q.Binary == "" {
				q.Binary = "qemu-system-x86_64"
			}
			if q.Machine == "" {
				q.Machine = "pc"
			}
			if q.Firmware == "" {
				q.Firmware = "bios"
			}
			if q.Accel == "" {
				q.Accel = "auto"
			}
			if q.NICModel == "" {
				q.NICModel = "virtio-net-pci"
			}
			if q.Firmware == "uefi" {
				if q.OVMFCode == "" {
					q.OVMFCode = "/usr/share/OVMF/OVMF_CODE_4M.fd"
				}
				if q.OVMFVars == "" {
					q.OVMFVars = "/usr/share/OVMF/OVMF_VARS_4M.fd"
				}
			}
		}
	}
}

// Validate checks the configuration and returns every problem found, each
// naming the field (machines[1].memory_mb: …).
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if c.Username == "" || len(c.Username) > 16 {
		bad("username: must be 1 to 16 characters (an IPMI user name)")
	}
	if c.Password == "" || len(c.Password) > maxIPMIPassword {
		bad("password: must be 1 to %d characters (an IPMI 2.0 password)", maxIPMIPassword)
	}
	if err := checkHostPort(c.Redfish.Listen); err != nil {
		bad("redfish.listen: %v", err)
	}
	if c.MaxImageMB < 1 || c.MaxImageMB > 64<<10 {
		bad("max_image_mb: must be between 1 and %d", 64<<10)
	}
	if len(c.Machines) == 0 {
		bad("machines: at least one machine is needed")
	}
	if len(c.Machines) > maxMachines {
		bad("machines: at most %d", maxMachines)
	}
	names := map[string]int{}
	listens := map[string]int{}
	macs := map[string]string{}
	for i, m := range c.Machines {
		at := fmt.Sprintf("machines[%d]", i)
		if !nameRE.MatchString(m.Name) {
			bad("%s.name: %q must be 1 to 63 letters, digits, '.', '_' or '-', starting with a letter or digit", at, m.Name)
		} else if j, dup := names[m.Name]; dup {
			bad("%s.name: %q is already machines[%d]'s", at, m.Name, j)
		} else {
			names[m.Name] = i
		}
		switch m.Backend {
		case BackendFake:
			if m.QEMU != nil {
				bad("%s.qemu: only for backend %q", at, BackendQEMU)
			}
		case BackendQEMU:
			if m.QEMU == nil {
				bad("%s.qemu: backend %q needs a qemu section (at least {})", at, BackendQEMU)
			}
		default:
			bad("%s.backend: %q is not %q or %q", at, m.Backend, BackendFake, BackendQEMU)
		}
		if m.IPMIListen != "" {
			if err := checkHostPort(m.IPMIListen); err != nil {
				bad("%s.ipmi_listen: %v", at, err)
			} else if _, port, _ := net.SplitHostPort(m.IPMIListen); port != "0" {
				if j, dup := listens[m.IPMIListen]; dup {
					bad("%s.ipmi_listen: %s is already machines[%d]'s", at, m.IPMIListen, j)
				}
				listens[m.IPMIListen] = i
			}
		}
		if m.CPUs < 1 || m.CPUs > maxCPUs {
			bad("%s.cpus: %d is not between 1 and %d", at, m.CPUs, maxCPUs)
		}
		if m.MemoryMB < 1024 || m.MemoryMB > maxMemoryMB || m.MemoryMB%1024 != 0 {
			bad("%s.memory_mb: %d must be a positive multiple of 1024 (Redfish reports GiB), at most %d", at, m.MemoryMB, maxMemoryMB)
		}
		if len(m.MACs) == 0 || len(m.MACs) > maxNICs {
			bad("%s.macs: 1 to %d MAC addresses are needed", at, maxNICs)
		}
		for k, mac := range m.MACs {
			hw, err := net.ParseMAC(mac)
			if err != nil || len(hw) != 6 {
				bad("%s.macs[%d]: %q is not a MAC address (aa:bb:cc:dd:ee:ff)", at, k, mac)
				continue
			}
			if hw[0]&1 != 0 {
				bad("%s.macs[%d]: %s is a multicast address", at, k, mac)
			}
			norm := hw.String()
			if owner, dup := macs[norm]; dup {
				bad("%s.macs[%d]: %s is already %s's", at, k, mac, owner)
			}
			macs[norm] = fmt.Sprintf("%s.macs[%d]", at, k)
		}
		if len(m.DisksGB) > maxDisks {
			bad("%s.disks_gb: at most %d disks", at, maxDisks)
		}
		for k, gb := range m.DisksGB {
			if gb < 1 || gb > maxDiskGB {
				bad("%s.disks_gb[%d]: %d is not between 1 and %d", at, k, gb, maxDiskGB)
			}
		}
		for field, v := range map[string]string{"manufacturer": m.Manufacturer, "product": m.Product, "serial": m.Serial, "sku": m.SKU} {
			if len(v) > 64 || strings.ContainsAny(v, ",\x00\n") {
				bad("%s.%s: at most 64 characters, no commas or newlines", at, field)
			}
		}
		if m.IPMIManufacturerID > 0x0fffff {
			bad("%s.ipmi_manufacturer_id: %d is not a 20-bit IANA enterprise number", at, m.IPMIManufacturerID)
		}
		if q := m.QEMU; q != nil {
			errs = append(errs, q.validate(at+".qemu", len(m.MACs))...)
		}
		if f := m.Faults; f != nil && (f.LatencyMS < 0 || f.LatencyMS > maxLatencyMS) {
			bad("%s.faults.latency_ms: %d is not between 0 and %d", at, f.LatencyMS, maxLatencyMS)
		}
		if f := m.Faults; f != nil && (f.Redfish500Count < 0 || f.Redfish500Count > 1<<20) {
			bad("%s.faults.redfish_500_count: %d is not between 0 and %d", at, f.Redfish500Count, 1<<20)
		}
	}
	return errors.Join(errs...)
}

func (q *QEMUConfig) validate(at string, nics int) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch q.Machine {
	case "pc", "q35":
	default:
		bad("%s.machine: %q is not \"pc\" or \"q35\"", at, q.Machine)
	}
	switch q.Firmware {
	case "bios", "uefi":
	default:
		bad("%s.firmware: %q is not \"bios\" or \"uefi\"", at, q.Firmware)
	}
	switch q.Accel {
	case "auto", "kvm", "tcg":
	default:
		bad("%s.accel: %q is not \"auto\", \"kvm\" or \"tcg\"", at, q.Accel)
	}
	if len(q.Taps) != 0 && len(q.Taps) != nics {
		bad("%s.taps: %d tap devices for %d MAC addresses (one per MAC, or none)", at, len(q.Taps), nics)
	}
	for k, tap := range q.Taps {
		if !nameRE.MatchString(tap) || len(tap) > 15 {
			bad("%s.taps[%d]: %q is not an interface name", at, k, tap)
		}
	}
	if strings.ContainsAny(q.NICModel, ",= ") {
		bad("%s.nic_model: %q is not a QEMU device name", at, q.NICModel)
	}
	return errs
}

func checkHostPort(s string) error {
	if s == "" {
		return errors.New("host:port is required")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port: %w", s, err)
	}
	if host != "" && net.ParseIP(host) == nil && host != "localhost" {
		return fmt.Errorf("%q: host must be an IP address or localhost", s)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("%q: bad port: %w", s, err)
	}
	return nil
}
