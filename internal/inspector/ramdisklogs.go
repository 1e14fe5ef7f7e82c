package inspector

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/inventory"
)

// storeRamdiskLogs writes the report's ramdisk logs (a base64 tarball) to
// [processing]ramdisk_logs_dir, named by
// [processing]ramdisk_logs_filename_format, as ironic-inspector's
// _store_logs does. Unlike upstream it is only called for a report that
// matched a node's introspection (and its token), so an unauthenticated
// client cannot fill the directory. Failures are logged.
func (s *Service) storeRamdiskLogs(rep *inventory.Report, nodeUUID string) {
	dir := s.o.RamdiskLogsDir
	if rep.Logs == "" {
		s.log.Debug("no logs were passed by the ramdisk", "node", nodeUUID)
		return
	}
	if dir == "" {
		s.log.Debug("ramdisk logs not stored: [processing]ramdisk_logs_dir is not set", "node", nodeUUID)
		return
	}
	logs, err := base64.StdEncoding.DecodeString(rep.Logs)
	if err != nil {
		s.log.Warn("ramdisk logs not stored: not base64", "node", nodeUUID, "error", err)
		return
	}
	name := ramdiskLogsName(s.o.RamdiskLogsFilenameFormat, map[string]string{
		"uuid": orUnknown(nodeUUID), "mac": orUnknown(strings.ReplaceAll(pxeMAC(rep), ":", "")),
		"bmc": orUnknown(bmcAddress(rep)),
	}, s.now().UTC())
	path := filepath.Join(dir, name)
	if rel, err := filepath.Rel(dir, path); err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		s.log.Warn("ramdisk logs not stored: the file name leaves ramdisk_logs_dir", "node", nodeUUID, "name", name)
		return
	}
	// The logs may hold anything the machine printed: only ferro's user reads them.
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		s.log.Error("could not store the ramdisk logs", "node", nodeUUID, "error", err)
		return
	}
	if err := os.WriteFile(path, logs, 0o600); err != nil {
		s.log.Error("could not store the ramdisk logs", "node", nodeUUID, "error", err)
		return
	}
	s.log.Info("ramdisk logs were stored", "node", nodeUUID, "file", path)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// pxeMAC is the MAC the node booted from, as upstream's get_pxe_mac: the
// report's boot_interface ("01-aa-bb-…" or "aa:bb:…").
func pxeMAC(rep *inventory.Report) string {
	mac := rep.BootInterface
	if len(mac) == 20 && strings.Count(mac, "-") == 6 {
		mac = strings.ReplaceAll(mac[3:], "-", ":")
	}
	return strings.ToLower(mac)
}

// bmcAddress is the report's BMC IPv4 address, "" when unknown.
func bmcAddress(rep *inventory.Report) string {
	if rep.Inventory == nil {
		return ""
	}
	if a := rep.Inventory.BMCAddress; a != "0.0.0.0" {
		return a
	}
	return ""
}

// ramdiskLogsName formats a file name the way Python's str.format does
// for upstream's ramdisk_logs_filename_format: {uuid}, {mac}, {bmc} and
// {dt} or {dt:strftime format}; {{ and }} are braces. Substituted values
// cannot add a directory (a "/" in them becomes "_").
func ramdiskLogsName(format string, fields map[string]string, dt time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '{' && i+1 < len(format) && format[i+1] == '{':
			b.WriteByte('{')
			i++
		case c == '}' && i+1 < len(format) && format[i+1] == '}':
			b.WriteByte('}')
			i++
		case c == '{':
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				b.WriteString(format[i:])
				return b.String()
			}
			name, spec, _ := strings.Cut(format[i+1:i+end], ":")
			var v string
			if name == "dt" {
				if spec == "" {
					spec = "%Y-%m-%d %H:%M:%S.%f" // str(datetime)
				}
				v = strftime(spec, dt)
			} else if fv, ok := fields[name]; ok {
				v = fv
			} else {
				v = format[i : i+end+1]
			}
			b.WriteString(strings.NewReplacer("/", "_", "\x00", "_").Replace(v))
			i += end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// strftime implements the directives of Python's strftime a file name
// needs; others are kept as written.
func strftime(spec string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(spec); i++ {
		if spec[i] != '%' || i+1 == len(spec) {
			b.WriteByte(spec[i])
			continue
		}
		i++
		switch spec[i] {
		case 'Y':
			fmt.Fprintf(&b, "%04d", t.Year())
		case 'm':
			fmt.Fprintf(&b, "%02d", int(t.Month()))
		case 'd':
			fmt.Fprintf(&b, "%02d", t.Day())
		case 'H':
			fmt.Fprintf(&b, "%02d", t.Hour())
		case 'M':
			fmt.Fprintf(&b, "%02d", t.Minute())
		case 'S':
			fmt.Fprintf(&b, "%02d", t.Second())
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'j':
			fmt.Fprintf(&b, "%03d", t.YearDay())
		case 's':
			fmt.Fprintf(&b, "%d", t.Unix())
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			b.WriteByte(spec[i])
		}
	}
	return b.String()
}
