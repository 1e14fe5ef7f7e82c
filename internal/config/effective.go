package config

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
)

// Mask replaces what stands in for a secret.
const Mask = "******"

// ResolvePaths fills the options whose default depends on the data
// directory, as `ferro serve --data-dir` uses them: the SQLite database
// and the boot file roots. It creates nothing.
func (c *Config) ResolvePaths(dataDir string) error {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dataDir, err)
	}
	if c.Database.Connection == "" {
		c.Database.Connection = "sqlite://" + filepath.Join(abs, "ferro.db")
	}
	if c.PXE.TFTPRoot == "" {
		c.PXE.TFTPRoot = filepath.Join(abs, "tftpboot")
	}
	if c.Deploy.HTTPRoot == "" {
		c.Deploy.HTTPRoot = filepath.Join(abs, "httpboot")
	}
	if c.Agent.DeployLogsLocalPath == "" {
		c.Agent.DeployLogsLocalPath = filepath.Join(abs, "deploy-logs")
	}
	return nil
}

// Sources says where each option's value came from: "file <path>",
// "env <VARIABLE>", or nothing (the default). Keys are "section.option".
type Sources map[string]string

// LoadSources reads which options the file at path (none when "") and the
// FERRO_* variables of environ set, the environment winning as in Load.
// It refuses what Load refuses.
func LoadSources(path string, environ []string) (Sources, error) {
	in, err := read(path, environ)
	if err != nil {
		return nil, err
	}
	src := Sources{}
	for k, o := range in.origins {
		if o.env != "" {
			src[k] = "env " + o.env
		} else {
			src[k] = "file " + o.file
		}
	}
	return src, nil
}

// dsnPassword finds password=… in a key/value connection string.
var dsnPassword = regexp.MustCompile(`(?i)(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// MaskConnection hides the password of a database connection string, in
// URL (postgresql://user:pass@host/db) or key/value (password=…) form.
func MaskConnection(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "__ferro_mask__")
			s = strings.Replace(u.String(), "__ferro_mask__", Mask, 1)
		}
	}
	if q := strings.Index(s, "?"); q >= 0 && strings.Contains(strings.ToLower(s[q:]), "password=") {
		if u, err := url.Parse(s); err == nil {
			v := u.Query()
			for k := range v {
				if strings.EqualFold(k, "password") {
					v.Set(k, Mask)
				}
			}
			u.RawQuery = v.Encode()
			s = strings.ReplaceAll(u.String(), url.QueryEscape(Mask), Mask)
		}
	}
	if !strings.Contains(s, "://") {
		s = dsnPassword.ReplaceAllString(s, "${1}"+Mask)
	}
	return s
}

// WriteINI writes the configuration as an INI file that can be pasted
// back: every option with its effective value under its section, secrets
// masked (a `# secret` comment says so), and before each a comment naming
// where the value came from.
func (c *Config) WriteINI(w io.Writer, src Sources) error {
	v := reflect.ValueOf(c).Elem()
	t := v.Type()
	for i := range t.NumField() {
		sec := t.Field(i).Tag.Get("section")
		sv := v.Field(i)
		if _, err := fmt.Fprintf(w, "\n[%s]\n", sec); err != nil {
			return err
		}
		for _, f := range optionFields(sv.Type()) {
			opt := optionName(f)
			fv := sv.FieldByIndex(f.Index)
			val := fmt.Sprint(fv.Interface())
			if s, ok := fv.Interface().([]string); ok {
				delim := f.Tag.Get("delim")
				if delim == "" {
					delim = ","
				}
				val = strings.Join(s, delim)
			}
			from := src[sec+"."+opt]
			if from == "" {
				from = "default"
			}
			note := ""
			switch {
			case f.Tag.Get("secret") == "true" && val != "":
				val, note = Mask, ", secret (masked)"
			case f.Tag.Get("secret") == "connection":
				if m := MaskConnection(val); m != val {
					val, note = m, ", password masked"
				}
			}
			// ; and # start a comment in an INI value: quote such a value
			// the way the INI reader understands.
			if strings.ContainsAny(val, ";#") && !strings.Contains(val, "`") {
				val = "`" + val + "`"
			}
			if _, err := fmt.Fprintf(w, "# %s%s\n%s = %s\n", from, note, opt, val); err != nil {
				return err
			}
		}
	}
	return nil
}
