// Package pxefilter is Ironic's PXE filter for an external dnsmasq
// ([pxe_filter]dhcp_hostsdir): it decides which MACs may boot now, a pure
// function of the nodes and their ports, and writes the decision as
// dnsmasq's dhcp-hostsdir files, in Ironic's (and ironic-inspector's)
// format: one file per MAC, "aa:bb:cc:dd:ee:ff" to allow it,
// "aa:bb:cc:dd:ee:ff,ignore" to deny it, and unknown_hosts_filter
// allowing or denying every other MAC.
package pxefilter

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/states"
)

// Node is what the decision reads of a node.
type Node struct {
	UUID, ProvisionState, InspectInterface string
}

// Port is what the decision reads of a port.
type Port struct {
	Address, NodeUUID string
}

// Decision is which MACs dnsmasq answers.
type Decision struct {
	// Allow are the ports of nodes being inspected, Deny every other port,
	// both lower case and sorted.
	Allow, Deny []string
	// AllowUnknown lets MACs no port has boot: while discovery is on, or
	// while any node is being inspected (the machine may PXE-boot from a
	// NIC without a port).
	AllowUnknown bool
}

// Decide is Ironic's PXEFilterManager._sync: the ports of nodes in
// inspecting or inspect wait whose inspect interface is one of supported
// ([pxe_filter]supported_inspect_interfaces) are allowed, every other
// port denied; unknown MACs are allowed with discovery or while a node
// is inspected.
func Decide(nodes []Node, ports []Port, supported []string, discovery bool) Decision {
	inspected := map[string]bool{}
	for _, n := range nodes {
		if (n.ProvisionState == states.InspectWait || n.ProvisionState == states.Inspecting) && slices.Contains(supported, n.InspectInterface) {
			inspected[n.UUID] = true
		}
	}
	var d Decision
	for _, p := range ports {
		mac := strings.ToLower(p.Address)
		if inspected[p.NodeUUID] {
			d.Allow = append(d.Allow, mac)
		} else {
			d.Deny = append(d.Deny, mac)
		}
	}
	slices.Sort(d.Allow)
	slices.Sort(d.Deny)
	d.Allow, d.Deny = slices.Compact(d.Allow), slices.Compact(d.Deny)
	d.AllowUnknown = discovery || len(inspected) > 0
	return d
}

// UnknownHostsFile is the file of every MAC the others do not name.
const UnknownHostsFile = "unknown_hosts_filter"

const (
	allowUnknown = "*:*:*:*:*:*\n"
	denyUnknown  = "*:*:*:*:*:*,ignore\n"
)

func allowLine(mac string) string { return mac + "\n" }
func denyLine(mac string) string  { return mac + ",ignore\n" }

// Sync makes dir hold d (Ironic's dnsmasq.sync): a file per allowed and
// denied MAC, unknown_hosts_filter, and, for the MAC files of ports that
// are gone, the unknown MACs' verdict. A file already right is not
// written again, so dnsmasq rereads only what changed; a file is written
// to a dot-file and renamed into place, so dnsmasq (which skips
// dot-files) never reads half of one. It returns how many files it wrote.
func Sync(dir string, d Decision) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("[pxe_filter]dhcp_hostsdir: %w", err)
	}
	current := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") {
			continue
		}
		if name != UnknownHostsFile {
			if _, err := net.ParseMAC(name); err != nil {
				continue // not ours
			}
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		current[name] = string(b)
	}
	want := map[string]string{}
	for _, mac := range d.Deny {
		want[mac] = denyLine(mac)
	}
	for _, mac := range d.Allow {
		want[mac] = allowLine(mac)
	}
	for name := range current {
		if _, known := want[name]; known || name == UnknownHostsFile {
			continue
		}
		// A MAC no port has any more is treated as an unknown one.
		if d.AllowUnknown {
			want[name] = allowLine(name)
		} else {
			want[name] = denyLine(name)
		}
	}
	want[UnknownHostsFile] = denyUnknown
	if d.AllowUnknown {
		want[UnknownHostsFile] = allowUnknown
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	// The unknown hosts' verdict last: a MAC denied before all others may boot.
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == UnknownHostsFile:
			return 1
		case b == UnknownHostsFile:
			return -1
		}
		return strings.Compare(a, b)
	})
	written := 0
	var errs []error
	for _, name := range names {
		if current[name] == want[name] {
			continue
		}
		if err := writeFile(dir, name, want[name]); err != nil {
			errs = append(errs, err)
			continue
		}
		written++
	}
	return written, errors.Join(errs...)
}

// writeFile replaces dir/name with content through a dot-file and a rename.
func writeFile(dir, name, content string) error {
	tmp, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
