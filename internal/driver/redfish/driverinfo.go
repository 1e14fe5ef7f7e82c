package redfish

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	bmc "github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/localfile"
)

// ParseDriverInfo reads Ironic's redfish_* keys into the BMC client's
// Endpoint. defaultAuth is [redfish]auth_type. A missing redfish_address
// wraps driver.ErrMissingParameter, any bad value
// driver.ErrInvalidParameter; messages name the key and never the
// password.
func ParseDriverInfo(info map[string]any, defaultAuth string) (bmc.Endpoint, error) {
	var ep bmc.Endpoint
	var bad []string
	str := func(key string) (string, bool) {
		v, ok := info[key]
		if !ok || v == nil {
			return "", false
		}
		s, isStr := v.(string)
		if !isStr {
			bad = append(bad, fmt.Sprintf("driver_info[%s] must be a string, not %T", key, v))
			return "", false
		}
		return s, s != ""
	}
	addr, ok := str("redfish_address")
	if !ok && len(bad) == 0 {
		return ep, fmt.Errorf("%w: missing redfish driver_info: driver_info[redfish_address] is required", driver.ErrMissingParameter)
	}
	if ok {
		a, err := parseAddress(addr)
		if err != nil {
			bad = append(bad, err.Error())
		}
		ep.Address = a
	}
	if id, ok := str("redfish_system_id"); ok {
		if strings.ContainsAny(id, "?#\\ \t\r\n") || strings.Contains(id, "..") {
			bad = append(bad, fmt.Sprintf("driver_info[redfish_system_id] %q is not a System path or Id", id))
		}
		ep.SystemID = id
	}
	ep.Username, _ = str("redfish_username")
	ep.Password, _ = str("redfish_password")
	ep.AuthType = defaultAuth
	if a, ok := str("redfish_auth_type"); ok {
		ep.AuthType = a
	}
	switch ep.AuthType {
	case bmc.AuthBasic, bmc.AuthSession, bmc.AuthAuto:
	case "":
		ep.AuthType = bmc.AuthAuto
	default:
		bad = append(bad, fmt.Sprintf("driver_info[redfish_auth_type] %q must be one of basic, session, auto", ep.AuthType))
	}
	if v, ok := info["redfish_verify_ca"]; ok && v != nil {
		switch x := v.(type) {
		case bool:
			ep.Insecure = !x
		case string:
			if b, err := strconv.ParseBool(x); err == nil || isBoolWord(x) {
				ep.Insecure = !(b || strings.EqualFold(x, "yes") || strings.EqualFold(x, "on"))
			} else if _, err := localfile.Stat(x); err == nil && filepath.IsAbs(x) {
				// Only the type is checked here (a regular file or a
				// directory this process may read), never the content: a
				// device or a FIFO is not opened. Every refusal has one
				// text, so the answer says nothing about what the path is.
				ep.CAFile = x
			} else {
				bad = append(bad, bmc.ErrCABundle.Error()+" (nor is it a boolean)")
			}
		default:
			bad = append(bad, fmt.Sprintf("driver_info[redfish_verify_ca] must be a boolean or a CA bundle path, not %T", v))
		}
	}
	if len(bad) > 0 {
		return ep, fmt.Errorf("%w: invalid redfish driver_info: %s", driver.ErrInvalidParameter, strings.Join(bad, "; "))
	}
	ep.Secrets = driver.SecretValues(HardwareType.Properties, info)
	return ep, nil
}

func isBoolWord(s string) bool {
	switch strings.ToLower(s) {
	case "yes", "no", "on", "off":
		return true
	}
	return false
}

// parseAddress accepts http(s)://host[:port] and a bare host[:port], which
// means https, as Ironic does.
func parseAddress(raw string) (string, error) {
	s := raw
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("driver_info[redfish_address] %q is not a URL: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("driver_info[redfish_address] %q must be http:// or https://", raw)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("driver_info[redfish_address] %q has no host", raw)
	case u.User != nil:
		return "", fmt.Errorf("driver_info[redfish_address] must not carry credentials: use redfish_username and redfish_password")
	case u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/"):
		return "", fmt.Errorf("driver_info[redfish_address] %q must be scheme://host[:port] without a path", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("driver_info[redfish_address] %q has an invalid port", raw)
		}
	}
	return u.Scheme + "://" + u.Host, nil
}
