package pxe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/ferrometal/ferro/internal/dhcpopt"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
)

// File names under the boot root, as Ironic lays them out.
const (
	configName  = "config"
	kernelName  = deployimage.KernelName
	ramdiskName = deployimage.RamdiskName
	macDir      = "pxelinux.cfg"
	bootScript  = "boot.ipxe"
)

// pxeTemplate is the node's PXELINUX config. Paths are relative to the
// TFTP root; "ipappend 2" makes PXELINUX add BOOTIF=01-aa-bb-cc-dd-ee-ff.
var pxeTemplate = template.Must(template.New("pxe").Parse(`default deploy

label deploy
kernel {{.Kernel}}
append initrd={{.Ramdisk}}{{with .Cmdline}} {{.}}{{end}}
ipappend 2
`))

// ipxeTemplate is the node's iPXE script. The kernel's initrd= names the
// image that the initrd command loads (its URL's last segment), which
// UEFI kernels need. A failed download is retried with a growing pause,
// and after ten the machine powers off instead of looping for ever.
var ipxeTemplate = template.Must(template.New("ipxe").Parse(`#!ipxe

# Deploy ramdisk for node {{.UUID}}, written by ferro.
set tries:int32 0

:ramdisk
imgfree
kernel {{.Kernel}}{{with .Cmdline}} {{.}}{{end}} BOOTIF=${mac} initrd=` + ramdiskName + ` || goto failed
initrd {{.Ramdisk}} || goto failed
boot || goto failed

:failed
iseq ${tries} 10 && goto give_up ||
inc tries
echo Loading the deploy ramdisk failed, attempt ${tries} of 10, retrying in ${tries} seconds.
sleep ${tries}
goto ramdisk

:give_up
echo Could not load the deploy ramdisk, powering off in 30 seconds.
sleep 30
poweroff
`))

// defaultBootScript is <http_root>/boot.ipxe, which DHCP hands to iPXE. It
// chains to the per-MAC script of the device iPXE booted from and, failing
// that (a NIC that DHCPed but is not the one enrolled, or an old ROM), of
// each other device in turn, and then to pxelinux.cfg/default, which the
// operator writes for machines ferro prepared nothing for.
const defaultBootScript = `#!ipxe

# Written by ferro: boot the configuration of this machine's MAC address.
chain --autofree ` + macDir + `/${mac:hexhyp} ||

set idx:int32 0
:next_device
isset ${net${idx}/mac} || goto not_found
chain --autofree ` + macDir + `/${net${idx}/mac:hexhyp} ||
inc idx || goto not_found
goto next_device

:not_found
# A machine without one of its own (discovery, an unmanaged inspection):
# the operator's default, as PXELINUX falls back to pxelinux.cfg/default.
chain --autofree ` + macDir + `/default ||
echo No boot configuration for any network device of this machine.
echo Rebooting in 60 seconds.
sleep 60
reboot
`

type templateData struct {
	UUID, Kernel, Ramdisk, Cmdline string
}

// render returns the node's config file.
func (b *Boot) render(p *plan, cmdline string) ([]byte, error) {
	d := templateData{UUID: p.uuid, Cmdline: cmdline}
	tmpl := pxeTemplate
	if b.kind == IPXE {
		tmpl = ipxeTemplate
		d.Kernel = p.httpURL + "/" + p.uuid + "/" + kernelName
		d.Ramdisk = p.httpURL + "/" + p.uuid + "/" + ramdiskName
	} else {
		d.Kernel = p.uuid + "/" + kernelName
		d.Ramdisk = p.uuid + "/" + ramdiskName
	}
	// Everything was validated; this guards the invariant that no value
	// can add a line or a token to the script.
	for _, v := range []string{d.Kernel, d.Ramdisk} {
		if !safeValue(v) {
			return nil, fmt.Errorf("%w: image URL %q is not safe in a boot script", driver.ErrInvalidParameter, v)
		}
	}
	if strings.ContainsAny(cmdline, "\r\n$") {
		return nil, fmt.Errorf("%w: kernel command line is not safe in a boot script", driver.ErrInvalidParameter)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("render %s config: %w", b.kind, err)
	}
	return buf.Bytes(), nil
}

// bootScriptName is the file name of the iPXE boot script: the base name
// of [pxe]ipxe_boot_script, as in Ironic, else boot.ipxe.
func (b *Boot) bootScriptName() string {
	if s := b.o.IPXEBootScript; s != "" {
		return filepath.Base(s)
	}
	return bootScript
}

// writeBootScript writes the iPXE boot script into http_root when its
// content changed: [pxe]ipxe_boot_script's file verbatim, else ferro's.
func (b *Boot) writeBootScript(root string) error {
	content := []byte(defaultBootScript)
	if s := b.o.IPXEBootScript; s != "" {
		c, err := os.ReadFile(s)
		if err != nil {
			return fmt.Errorf("read [pxe]ipxe_boot_script: %w", err)
		}
		content = c
	}
	path := filepath.Join(root, b.bootScriptName())
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, content) {
		return nil
	}
	return writeFileAtomic(path, content)
}

// macEntries returns the names under pxelinux.cfg/ for MACs
// (aa:bb:cc:dd:ee:ff): 01-aa-bb-… for PXELINUX (hardware type 1,
// Ethernet), aa-bb-… for iPXE's ${mac:hexhyp}.
func (b *Boot) macEntries(macs []string) []string {
	out := make([]string, 0, len(macs))
	for _, m := range macs {
		h := strings.ReplaceAll(m, ":", "-")
		if b.kind == PXE {
			h = "01-" + h
		}
		out = append(out, h)
	}
	return out
}

// dhcpOptions are the options that send the node's PXE ROM to the boot
// file: PXE gets 67=[pxe]pxe_bootfile_name; iPXE gets the ROM to chain-load
// ([pxe]ipxe_bootfile_name) until iPXE runs, then the boot script over
// HTTP. With [pxe]tftp_server set, 66, 150 and 255 name it.
func (b *Boot) dhcpOptions(p *plan) []dhcpopt.Option {
	var opts []dhcpopt.Option
	if b.kind == IPXE {
		opts = append(opts,
			dhcpopt.Option{Name: "tag:!ipxe,67", Value: b.o.IPXEBootfile, IPVersion: 4},
			dhcpopt.Option{Name: "tag:ipxe,67", Value: p.httpURL + "/" + b.bootScriptName(), IPVersion: 4},
		)
	} else {
		opts = append(opts, dhcpopt.Option{Name: "67", Value: b.o.PXEBootfile, IPVersion: 4})
	}
	if s := b.o.TFTPServer; s != "" {
		for _, name := range []string{"66", "150", "255"} {
			opts = append(opts, dhcpopt.Option{Name: name, Value: s, IPVersion: 4})
		}
	}
	return opts
}
