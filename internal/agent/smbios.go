package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/u-root/u-root/pkg/smbios"
)

// SMBIOS reads the firmware's SMBIOS tables from root/sys/firmware/dmi/tables.
// It returns errNotFound (wrapped) when the machine has none.
func SMBIOS(root string) (*smbios.Info, error) {
	dir := filepath.Join(root, "sys/firmware/dmi/tables")
	entry, err := os.ReadFile(filepath.Join(dir, "smbios_entry_point"))
	if os.IsNotExist(err) {
		return nil, fmt.Errorf("read SMBIOS: %w", errNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read SMBIOS entry point: %w", err)
	}
	tables, err := os.ReadFile(filepath.Join(dir, "DMI"))
	if err != nil {
		return nil, fmt.Errorf("read SMBIOS tables: %w", err)
	}
	info, err := smbios.ParseInfo(entry, tables)
	if err != nil {
		return nil, fmt.Errorf("parse SMBIOS: %w", err)
	}
	return info, nil
}

// SystemVendor is the machine's identity from SMBIOS type 1 (system) and
// type 0 (firmware), in IPA's system_vendor shape plus the SKU Number
// (an extension: IPA has no sku).
func SystemVendor(smb *smbios.Info) (*inventory.SystemVendor, error) {
	si, err := smb.GetSystemInfo()
	if err != nil {
		return nil, fmt.Errorf("SMBIOS system information: %w", err)
	}
	sv := &inventory.SystemVendor{
		Manufacturer: strings.TrimSpace(si.Manufacturer),
		ProductName:  strings.TrimSpace(si.ProductName),
		SerialNumber: strings.TrimSpace(si.SerialNumber),
	}
	// u-root says "Not Specified" for string 0 (none); SMBIOS before 2.4
	// has no SKU at all.
	if t := smb.GetTablesByType(smbios.TableTypeSystemInfo); len(t) > 0 {
		if n, err := t[0].GetByteAt(0x19); err == nil && n != 0 {
			sv.SKU = strings.TrimSpace(si.SKUNumber)
		}
	}
	if bi, err := smb.GetBIOSInfo(); err == nil {
		sv.Firmware = &inventory.Firmware{
			Vendor:    strings.TrimSpace(bi.Vendor),
			Version:   strings.TrimSpace(bi.Version),
			BuildDate: strings.TrimSpace(bi.ReleaseDate),
		}
	}
	return sv, nil
}
