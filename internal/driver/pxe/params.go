package pxe

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ferrometal/ferro/internal/driver"
)

// paramKeyRE is what a kernel parameter name may be made of.
var paramKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// unsafeChars could end a token or a line, expand a variable or start a
// comment in a kernel command line, a PXELINUX config or an iPXE script.
// Whitespace and control characters are refused separately.
const unsafeChars = "\"'`$;\\|<>#"

// maxCmdline is the kernel's COMMAND_LINE_SIZE on x86 (2048, with the NUL).
// A longer line is truncated by the boot loader or the kernel, and what
// goes first is the end: the inspection callback URL.
const maxCmdline = 2047

// reservedKeys are set by the templates; a parameter must not override them.
var reservedKeys = map[string]bool{"BOOTIF": true, "initrd": true}

// safeValue reports whether s can be pasted into a kernel command line,
// a PXELINUX line or an iPXE command as one token: printable ASCII only,
// nothing from unsafeChars.
func safeValue(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(unsafeChars, c) >= 0 {
			return false
		}
	}
	return true
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// checkParam returns why key (=value) may not be a kernel parameter, or "".
func checkParam(key, value string, flag bool) string {
	switch {
	case !paramKeyRE.MatchString(key):
		return fmt.Sprintf("kernel parameter name %q must match %s", truncate(key), paramKeyRE)
	case reservedKeys[key]:
		return fmt.Sprintf("kernel parameter %s is set by the boot interface and cannot be given", key)
	case flag && value != "":
		return fmt.Sprintf("kernel parameter %s is a flag but has the value %q", key, truncate(value))
	case !safeValue(value):
		return fmt.Sprintf("kernel parameter %s: value %q contains whitespace, control, non-ASCII or script characters (%s)",
			key, truncate(value), unsafeChars)
	}
	return ""
}

// checkAppendParams validates kernel_append_params, taken as Ironic does
// from instance_info, else driver_info, else [pxe]kernel_append_params,
// with %default% replaced by the configured value, and returns its tokens.
func (b *Boot) checkAppendParams(pr *problems, t *driver.Task) []string {
	def := b.o.KernelAppendParams
	src, val := "[pxe]kernel_append_params", def
	for _, loc := range []struct {
		name string
		info map[string]any
	}{{"instance_info", t.Node.InstanceInfo}, {"driver_info", t.Node.DriverInfo}} {
		v, ok := loc.info["kernel_append_params"]
		if !ok || v == nil {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			pr.invalidf("%s[kernel_append_params] must be a string, not %T", loc.name, v)
			return nil
		}
		src, val = loc.name+"[kernel_append_params]", strings.ReplaceAll(s, "%default%", def)
		break
	}
	if !printable(val) || strings.ContainsAny(val, "\t") {
		pr.invalidf("%s contains control characters", src)
		return nil
	}
	var tokens []string
	for _, tok := range strings.Split(val, " ") {
		if tok == "" {
			continue
		}
		k, v, hasValue := strings.Cut(tok, "=")
		if why := checkParam(k, v, !hasValue); why != "" {
			pr.invalidf("%s: %s", src, why)
			continue
		}
		tokens = append(tokens, tok)
	}
	return tokens
}

// cmdline builds the kernel command line the template completes with
// BOOTIF (and, for iPXE, initrd): kernel_append_params, ipa-debug=1 when
// [DEFAULT]debug, then params in their order.
func (b *Boot) cmdline(p *plan, params driver.RamdiskParams) (string, error) {
	tokens := append([]string(nil), p.appendParams...)
	if b.o.Debug {
		tokens = append(tokens, "ipa-debug=1")
	}
	var bad []string
	for _, prm := range params {
		if why := checkParam(prm.Key, prm.Value, prm.Flag); why != "" {
			bad = append(bad, "ramdisk parameters: "+why)
			continue
		}
		if prm.Flag {
			tokens = append(tokens, prm.Key)
		} else {
			tokens = append(tokens, prm.Key+"="+prm.Value)
		}
	}
	if len(bad) > 0 {
		return "", fmt.Errorf("%w: %s", driver.ErrInvalidParameter, strings.Join(bad, "; "))
	}
	line := strings.Join(tokens, " ")
	if n := len(line) + b.templateArgsLen(p); n > maxCmdline {
		return "", fmt.Errorf("%w: the kernel command line would be %d bytes, more than the kernel's %d",
			driver.ErrInvalidParameter, n, maxCmdline)
	}
	return line, nil
}

// templateArgsLen is the length the template adds to the kernel arguments.
func (b *Boot) templateArgsLen(p *plan) int {
	if b.kind == IPXE {
		return len(" BOOTIF=aa:bb:cc:dd:ee:ff initrd=" + ramdiskName)
	}
	return len("initrd=" + p.uuid + "/" + ramdiskName + " " + " BOOTIF=01-aa-bb-cc-dd-ee-ff")
}
