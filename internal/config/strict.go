package config

import (
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/ini.v1"
)

// ferro refuses a configuration that names a section, an option or a
// FERRO_* variable it does not have, so that a typo ([api]prot,
// [databse]) cannot leave ferro running on a default. The valid names are
// the fields of Config (one source of truth: a new field is valid at
// once). [DEFAULT]ignored_options is the escape hatch: names meant for
// another program reading the same file (Ironic, ironic-inspector) or for
// a newer ferro.

// NotOptions are the FERRO_* variables of ferro's own tooling (test
// harnesses, benchmarks, scripts) that are not options: a shell that runs
// the tests may have them set, and ferro ignores them. Every FERRO_ name
// used in the repository is either an option or listed here
// (TestEveryFerroVariableInTheTreeIsKnown).
var NotOptions = []string{
	"FERRO_BIN",                   // the ferro binary the harnesses and benchmarks start
	"FERRO_VBMC_BIN",              // the ferro-vbmc binary internal/testing/vbmctest starts
	"FERRO_TEMPEST_TARGET",        // test/tempest: the API under test
	"FERRO_TEMPEST_DIR",           // test/tempest: where tempest's files are kept
	"FERRO_TEMPEST_WRITE_PASSING", // test/tempest: write the passing tests (baseline)
	"FERRO_SDK_TARGET",            // test/sdk: the API under test
	"FERRO_SDK_DIR",               // test/sdk: where the workspace is kept
	"FERRO_SDK_WRITE_PASSING",     // test/sdk: write the passing tests (baseline)
	"FERRO_METAL3_DIAGNOSE",       // test/metal3
	"FERRO_METAL3_TRANSCRIPT",     // test/metal3
	"FERRO_AGENT_UEVENT_HELPER",   // internal/agent tests: re-executed helpers
	"FERRO_AGENT_NETWORK_HELPER",
	"FERRO_AGENT_LLDP_HELPER",
	"FERRO_AGENT_CARRIER_HELPER",
	"FERRO_WEB_SCREENSHOTS", // test/web: where the browser lane's screenshots go
	"FERRO_BEFORE",          // test/apicompare: the two binaries compared
	"FERRO_AFTER",
	"FERRO_IRONIC_POLICY", // test/auth: another Ironic's policy.py for the authorization table
}

// origin is where an option's value came from.
type origin struct {
	env  string // the FERRO_* variable
	file string
	line int // 0 when the line was not found
}

// String is how errors name the origin: the variable, or file:line.
func (o origin) String() string {
	switch {
	case o.env != "":
		return o.env
	case o.line > 0:
		return fmt.Sprintf("%s:%d", o.file, o.line)
	}
	return o.file
}

// input is the configuration as read: the file with the FERRO_* variables
// applied over it, where each option came from, and the names set but
// ignored as [DEFAULT]ignored_options says.
type input struct {
	f       *ini.File
	origins map[string]origin // by "section.option"
	ignored []string
}

// where names the origin of "section.option", "" for a default.
func (in *input) where(key string) string { return in.origins[key].String() }

// envName is the variable that sets option of section.
func envName(section, option string) string {
	return "FERRO_" + strings.ToUpper(section) + "_" + strings.ToUpper(option)
}

// read loads the INI file at path (none when "") and the FERRO_* variables
// of environ, refusing every unknown name that ignored_options does not
// list. All unknown names are reported at once, with the line that would
// ignore them.
func read(path string, environ []string) (*input, error) {
	in := &input{f: ini.Empty(ini.LoadOptions{AllowBooleanKeys: true}), origins: map[string]origin{}}
	var lines map[string]int
	if path != "" {
		f, err := ini.LoadSources(ini.LoadOptions{AllowBooleanKeys: true}, path)
		if err != nil {
			return nil, fmt.Errorf("read configuration %s: %w", path, err)
		}
		in.f = f
		lines = lineNumbers(path)
	}
	options := map[string][]string{} // section → its options
	byEnv := map[string][2]string{}
	forEachOption(func(section, option string, _ reflect.StructField) {
		options[section] = append(options[section], option)
		byEnv[envName(section, option)] = [2]string{section, option}
	})
	env := map[string]string{}
	var envOrder []string
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "FERRO_") {
			continue
		}
		if _, seen := env[name]; !seen {
			envOrder = append(envOrder, name)
		}
		env[name] = val
	}

	// Options whose omission would be less safe are refused whatever
	// ignored_options says.
	if err := checkIgnoredSecurity(in.f); err != nil {
		return nil, err
	}
	// The escape hatch next: it decides what else is refused.
	const hatch = "DEFAULT.ignored_options"
	raw, hatchFrom := "", origin{}
	if v, ok := env[envName("DEFAULT", "ignored_options")]; ok {
		raw, hatchFrom = v, origin{env: envName("DEFAULT", "ignored_options")}
	} else if k, err := in.f.Section(ini.DefaultSection).GetKey("ignored_options"); err == nil {
		raw, hatchFrom = k.String(), origin{file: path, line: lines[hatch]}
	}
	ignore, err := parseIgnored(raw, options, byEnv)
	if err != nil {
		return nil, fmt.Errorf("%s: [DEFAULT]ignored_options: %w", hatchFrom, err)
	}

	var unknown []string // what the hint would add to ignored_options
	var problems []string
	for _, sec := range in.f.Sections() {
		name := sectionName(sec.Name())
		opts, known := options[name]
		if !known {
			// An empty section sets nothing, so nothing in it can be
			// mistyped (Debian's ironic.conf has dozens).
			if len(sec.Keys()) == 0 {
				continue
			}
			if ignore["["+name+"]"] {
				in.ignored = append(in.ignored, "["+name+"]")
				continue
			}
			var rest []string
			for _, key := range sec.Keys() {
				if !ignore["["+name+"]"+key.Name()] {
					rest = append(rest, key.Name())
				} else {
					in.ignored = append(in.ignored, "["+name+"]"+key.Name())
				}
			}
			if len(rest) == 0 {
				continue
			}
			msg := fmt.Sprintf("%s: ferro has no section [%s] (it sets %s)", origin{file: path, line: lines["["+name+"]"]}, name, strings.Join(rest, ", "))
			if s := closest(name, sortedKeys(options)); s != "" {
				msg += fmt.Sprintf("; did you mean [%s]?", s)
			}
			problems = append(problems, msg)
			unknown = append(unknown, "["+name+"]")
			continue
		}
		for _, key := range sec.Keys() {
			k := name + "." + key.Name()
			if slices.Contains(opts, key.Name()) {
				in.origins[k] = origin{file: path, line: lines[k]}
				continue
			}
			if ignore["["+name+"]"+key.Name()] {
				in.ignored = append(in.ignored, "["+name+"]"+key.Name())
				continue
			}
			msg := fmt.Sprintf("%s: [%s] has no option %s", origin{file: path, line: lines[k]}, name, key.Name())
			if s := suggestOption(name, key.Name(), options); s != "" {
				msg += "; did you mean " + s + "?"
			}
			problems = append(problems, msg)
			unknown = append(unknown, "["+name+"]"+key.Name())
		}
	}
	for _, name := range envOrder {
		if so, ok := byEnv[name]; ok {
			in.f.Section(iniSection(so[0])).Key(so[1]).SetValue(env[name])
			in.origins[so[0]+"."+so[1]] = origin{env: name}
			continue
		}
		if slices.Contains(NotOptions, name) {
			continue
		}
		if ignore[name] {
			in.ignored = append(in.ignored, name)
			continue
		}
		msg := fmt.Sprintf("%s: no such option (FERRO_<SECTION>_<OPTION>)", name)
		candidates := slices.Concat(sortedKeys(byEnv), NotOptions)
		if s := closest(strings.TrimPrefix(name, "FERRO_"), trimAll(candidates, "FERRO_")); s != "" {
			msg += "; did you mean FERRO_" + s + "?"
		}
		problems = append(problems, msg)
		unknown = append(unknown, name)
	}
	if len(problems) > 0 {
		return nil, &UnknownNamesError{Problems: problems, Names: unknown}
	}
	return in, nil
}

// UnknownNamesError is a configuration that names sections, options or
// variables ferro does not have.
type UnknownNamesError struct {
	Problems []string // one per name, each naming its file and line or its variable
	Names    []string // the names, as [DEFAULT]ignored_options takes them
}

func (e *UnknownNamesError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "configuration names %d unknown section(s), option(s) or variable(s):\n", len(e.Problems))
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	b.WriteString("ferro refuses unknown names so that a typo cannot leave it running on a default.\n")
	b.WriteString("Fix the typos. Names meant for another program reading the same file (Ironic's own options)\n")
	b.WriteString("or for a newer ferro can be ignored explicitly, in [DEFAULT] (or FERRO_DEFAULT_IGNORED_OPTIONS):\n")
	fmt.Fprintf(&b, "  %s%s", IgnoredOptionsHint, strings.Join(e.Names, ", "))
	return b.String()
}

// IgnoredOptionsHint starts the line UnknownNamesError suggests.
const IgnoredOptionsHint = "ignored_options = "

// ignoredEntry is the form of an ignored_options entry: [section],
// [section]option or FERRO_NAME.
var ignoredEntry = regexp.MustCompile(`^(\[[A-Za-z0-9_.-]+\]([A-Za-z0-9_.-]+)?|FERRO_[A-Z0-9_]+)$`)

// parseIgnored reads ignored_options. An entry naming what ferro has is
// refused: ignoring it would hide a real setting, or (a whole known
// section) every typo in it.
func parseIgnored(raw string, options map[string][]string, byEnv map[string][2]string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, e := range strings.Split(raw, ",") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		if !ignoredEntry.MatchString(e) {
			return nil, fmt.Errorf("%q is not [section], [section]option or FERRO_NAME", e)
		}
		if so, ok := byEnv[e]; ok {
			return nil, fmt.Errorf("%s sets [%s]%s, which ferro has: it cannot be ignored", e, so[0], so[1])
		}
		if strings.HasPrefix(e, "[") {
			sec, opt, _ := strings.Cut(e[1:], "]")
			if opts, ok := options[sec]; ok {
				if opt == "" {
					return nil, fmt.Errorf("ferro has section [%s]: list its unknown options one by one, so that a typo in it is still caught", sec)
				}
				if slices.Contains(opts, opt) {
					return nil, fmt.Errorf("ferro has option %s: it cannot be ignored", e)
				}
			}
		}
		out[e] = true
	}
	return out, nil
}

// suggestOption is the option closest to section's opt: one of the
// section's own, else one of the same name in another section.
func suggestOption(section, opt string, options map[string][]string) string {
	if s := closest(opt, options[section]); s != "" {
		return "[" + section + "]" + s
	}
	for _, sec := range sortedKeys(options) {
		if slices.Contains(options[sec], opt) {
			return "[" + sec + "]" + opt
		}
	}
	return ""
}

// closest is the candidate nearest to name by edit distance (case
// ignored), "" when none is near enough to be a typo of it.
func closest(name string, candidates []string) string {
	limit := max(2, len(name)/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes (names are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lineNumbers maps "section.option" (the last line that sets it, as the
// INI reader keeps the last value) and "[section]" (its first header) to
// line numbers in the file at path. It is a locator for error messages
// only; the values come from the INI reader.
func lineNumbers(path string) map[string]int {
	out := map[string]int{}
	data, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	sec := "DEFAULT"
	for i, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' || l[0] == ';' {
			continue
		}
		if l[0] == '[' {
			if j := strings.IndexByte(l, ']'); j > 0 {
				sec = strings.TrimSpace(l[1:j])
				if _, ok := out["["+sec+"]"]; !ok {
					out["["+sec+"]"] = i + 1
				}
			}
			continue
		}
		key := l
		if j := strings.IndexAny(l, "=:"); j >= 0 {
			key = l[:j]
		}
		out[sec+"."+strings.TrimSpace(key)] = i + 1
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func trimAll(s []string, prefix string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strings.TrimPrefix(v, prefix)
	}
	return out
}
