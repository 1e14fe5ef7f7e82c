package ironic

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
)

// Secrets never leave the API. Ironic masks driver_info and instance_info
// with oslo.utils' mask_dict_password: a value whose key, lower-cased,
// contains one of these words is replaced by "******", at every depth, and
// secrets embedded in other strings ("--password x", "password=x") are
// scrubbed. driver_info also hides the SNMP keys, instance_info the config
// drive and image URL, driver_internal_info the agent token.
var sanitizeKeys = []string{
	"adminpass", "admin_pass", "password", "admin_password",
	"auth_token", "new_pass", "auth_password", "secret_uuid",
	"secret", "sys_pswd", "token", "configdrive",
	"chappassword", "encrypted_key", "private_key",
	"fernetkey", "sslkey", "passphrase",
	"cephclusterfsid", "octaviaheartbeatkey", "rabbitcookie",
	"cephmanilaclientkey", "pacemakerremoteauthkey",
	"designaterndckey", "cephadminkey", "heatauthencryptionkey",
	"cephclientkey", "keystonecredential",
	"barbicansimplecryptokek", "cephrgwkey", "swifthashsuffix",
	"migrationsshkey", "cephmdskey", "cephmonkey",
}

const secretMask = "******"

// secretKeys caches the verdict per key name: the same few keys
// (ipmi_address, ipmi_password, …) repeat on every node of a list. Reads
// are lock-free; a miss copies the map.
var secretKeys atomic.Pointer[map[string]bool]

// isSecretKey reports whether the value under key k is a secret.
func isSecretKey(k string) bool {
	cur := secretKeys.Load()
	if cur != nil {
		if v, ok := (*cur)[k]; ok {
			return v
		}
	}
	v := namesSecret(k)
	// k may share the memory of a stored node body (appendStored): the
	// cache keeps a copy, not the body.
	k = strings.Clone(k)
	var next map[string]bool
	if cur == nil || len(*cur) >= 4096 {
		next = map[string]bool{k: v}
	} else {
		next = maps.Clone(*cur)
		next[k] = v
	}
	secretKeys.CompareAndSwap(cur, &next)
	return v
}

// namesSecret reports whether s, lower-cased, contains one of the words of
// sanitizeKeys.
func namesSecret(s string) bool {
	if !hasSecretAnchor(s) {
		return false
	}
	lower := strings.ToLower(s)
	return slices.ContainsFunc(sanitizeKeys, func(k string) bool { return strings.Contains(lower, k) })
}

// secretAnchors are short words one of which every word of sanitizeKeys
// contains (TestSecretAnchors_CoverSanitizeKeys), so that a string with
// none of them, as most URLs and addresses are, is passed in one scan
// instead of lower-casing it and searching it for each word: that was a
// sixth of rendering a detailed node list.
var secretAnchors = []string{"pass", "pswd", "secret", "suffix", "token", "configdrive", "cookie", "key", "kek", "fsid"}

// hasSecretAnchor reports whether s, lower-cased, may contain one of
// secretAnchors (TestHasSecretAnchor): ASCII letters are folded as it
// scans, and a string with any other byte is a maybe (Unicode lower-casing
// can make ASCII of it: the Kelvin sign is a k).
func hasSecretAnchor(s string) bool {
	for i := 0; i < len(s); i++ {
		rest := s[i:]
		switch lowerASCII(rest[0]) {
		case 'p':
			if hasPrefixFold(rest, "pass") || hasPrefixFold(rest, "pswd") {
				return true
			}
		case 's':
			if hasPrefixFold(rest, "secret") || hasPrefixFold(rest, "suffix") {
				return true
			}
		case 't':
			if hasPrefixFold(rest, "token") {
				return true
			}
		case 'c':
			if hasPrefixFold(rest, "configdrive") || hasPrefixFold(rest, "cookie") {
				return true
			}
		case 'k':
			if hasPrefixFold(rest, "key") || hasPrefixFold(rest, "kek") {
				return true
			}
		case 'f':
			if hasPrefixFold(rest, "fsid") {
				return true
			}
		default:
			if rest[0] >= 0x80 {
				return true
			}
		}
	}
	return false
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether s starts with lower, a lower-case ASCII
// word, ignoring the case of ASCII letters.
func hasPrefixFold(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if lowerASCII(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

// maskDriverInfo is the masker for driver_info. Beyond Ironic's keys,
// ferro also hides snmp_community (an SNMP v1/v2c community is a
// password) and ipmi_kg_key (the IPMI 2.0 BMC key), which Ironic shows.
func maskDriverInfo(k string) bool {
	switch k {
	case "snmp_auth_key", "snmp_priv_key", "snmp_community", "snmp_community_read", "snmp_community_write", "ipmi_kg_key":
		return true
	}
	return isSecretKey(k)
}

// maskInstanceInfo is the masker for instance_info. configdrive is caught
// by the sanitize list; image_url is Ironic's addition.
func maskInstanceInfo(k string) bool {
	return isSecretKey(k) || k == "image_url"
}

// maskAgentToken is the masker for driver_internal_info.
func maskAgentToken(k string) bool { return k == "agent_secret_token" }

var (
	secretAlternation = strings.Join(sanitizeKeys, "|")
	secretPatterns    = []*regexp.Regexp{
		regexp.MustCompile(`(?is)((?:` + secretAlternation + `)[0-9]*\s*=\s*["']?)[^\s"']+`),
		regexp.MustCompile(`(?is)(--(?:` + secretAlternation + `)[0-9]*\s+)[^'"=\s]+`),
		regexp.MustCompile(`(?is)(["'][^"']*(?:` + secretAlternation + `)[0-9]*["']\s*:\s*u?["'])[^"']*`),
		regexp.MustCompile(`(?is)(<(?:` + secretAlternation + `)[0-9]*>)[^<]*`),
	}
)

// maskString scrubs secrets written inside a string value, like
// oslo.utils' mask_password.
func maskString(s string) string {
	if !strings.ContainsAny(s, "=:-<") {
		return s
	}
	if !namesSecret(s) {
		return s
	}
	for _, re := range secretPatterns {
		s = re.ReplaceAllString(s, "${1}"+secretMask)
	}
	return s
}
