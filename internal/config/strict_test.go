package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeConf(t *testing.T, conf string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ferro.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A mistyped section, option or variable refuses the start, each named with
// its file and line (or its variable) and the closest valid name.
func TestLoad_UnknownNamesRefusedWithSuggestion(t *testing.T) {
	path := writeConf(t, "[api]\nprot = 33385\n\n[databse]\nconnection = postgresql://db/ferro\n[inspector]\nport = 5051\n[API]\nhost_ip = 0.0.0.0\n")
	_, _, err := Load(path, []string{"FERRO_API_PROT=7000", "FERRO_DATABASE_CONECTION=x", "FERRO_WHATEVER=1"}, testHardware)
	var une *UnknownNamesError
	if !errors.As(err, &une) {
		t.Fatalf("Load = %v, want an *UnknownNamesError", err)
	}
	want := []string{
		path + ":2: [api] has no option prot; did you mean [api]port?",
		path + ":4: ferro has no section [databse] (it sets connection); did you mean [database]?",
		path + ":7: [inspector] has no option port; did you mean [api]port?",
		path + ":8: ferro has no section [API] (it sets host_ip); did you mean [api]?",
		"FERRO_API_PROT: no such option (FERRO_<SECTION>_<OPTION>); did you mean FERRO_API_PORT?",
		"FERRO_DATABASE_CONECTION: no such option (FERRO_<SECTION>_<OPTION>); did you mean FERRO_DATABASE_CONNECTION?",
		"FERRO_WHATEVER: no such option (FERRO_<SECTION>_<OPTION>)",
	}
	if diff := cmp.Diff(want, une.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	if !strings.Contains(err.Error(), "ignored_options = [api]prot, [databse], [inspector]port, [API], FERRO_API_PROT, FERRO_DATABASE_CONECTION, FERRO_WHATEVER") {
		t.Errorf("the error does not give the ignored_options line:\n%v", err)
	}
}

// A value of the wrong type names the variable, or the file and line, that set it.
func TestLoad_BadValueNamesItsOrigin(t *testing.T) {
	path := writeConf(t, "[DEFAULT]\ndebug = true\n[api]\n\nport = abc\n")
	if _, _, err := Load(path, nil, testHardware); err == nil || !strings.Contains(err.Error(), path+`:5: [api]port: "abc" is not an integer`) {
		t.Errorf("from the file: %v", err)
	}
	if _, _, err := Load(path, []string{"FERRO_API_PORT=xyz"}, testHardware); err == nil || !strings.Contains(err.Error(), `FERRO_API_PORT: [api]port: "xyz" is not an integer`) {
		t.Errorf("from the environment: %v", err)
	}
	if _, _, err := Load("", []string{"FERRO_API_PORT=70000"}, testHardware); err == nil || !strings.Contains(err.Error(), "FERRO_API_PORT: [api]port 70000 is not a TCP port") {
		t.Errorf("out of range: %v", err)
	}
	path = writeConf(t, "[conductor]\nworkers_pool_size = 0\n")
	if _, _, err := Load(path, nil, testHardware); err == nil || !strings.Contains(err.Error(), path+":2: [conductor]workers_pool_size must be at least 1") {
		t.Errorf("validation from the file: %v", err)
	}
}

// The escape hatch: [DEFAULT]ignored_options makes an Ironic site's
// ironic.conf load, and ferro reads the options it has from it. The line
// to add is the one the refusal prints.
func TestLoad_IronicConfWithIgnoredOptions(t *testing.T) {
	conf, err := os.ReadFile("testdata/ironic.conf")
	if err != nil {
		t.Fatal(err)
	}
	path := writeConf(t, string(conf))
	_, _, err = Load(path, nil, testHardware)
	var une *UnknownNamesError
	if !errors.As(err, &une) {
		t.Fatalf("Load of an ironic.conf = %v, want the unknown names refused", err)
	}
	hint := err.Error()[strings.LastIndex(err.Error(), IgnoredOptionsHint):]
	for _, name := range []string{"[DEFAULT]transport_url", "[api]api_workers", "[database]max_pool_size", "[oslo_messaging_rabbit]", "[pxe]pxe_append_params", "[keystone_authtoken]memcache_pool_maxsize"} {
		if !strings.Contains(hint, name) {
			t.Errorf("the hint %q does not name %s", hint, name)
		}
	}

	// Pasted into [DEFAULT], the hint makes the file load.
	fixed := strings.Replace(string(conf), "[DEFAULT]\n", "[DEFAULT]\n"+hint+"\n", 1)
	path = writeConf(t, fixed)
	cfg, ignored, err := Load(path, nil, testHardware)
	if err != nil {
		t.Fatalf("with the hint: %v", err)
	}
	if cfg.API.HostIP != "192.0.2.10" || cfg.Database.Connection != "postgresql://ironic:dbsecret@db.example:5432/ironic" ||
		cfg.Conductor.DeployKernel != "file:///var/lib/ironic/images/ipa.kernel" || cfg.KeystoneAuthtoken.Username != "ironic" ||
		cfg.Agent.DeployLogsCollect != "always" || cfg.Agent.DeployLogsLocalPath != "/var/log/ironic/deploy" {
		t.Errorf("ferro's options not read: api %+v, database %q", cfg.API, cfg.Database.Connection)
	}
	if len(ignored) != len(une.Names) {
		t.Errorf("ignored %v, want the %d names of the hint", ignored, len(une.Names))
	}
}

func TestLoad_IgnoredOptionsRefusesWhatFerroHas(t *testing.T) {
	for entry, want := range map[string]string{
		"[api]port":      "ferro has option [api]port: it cannot be ignored",
		"[api]":          "ferro has section [api]: list its unknown options one by one",
		"FERRO_API_PORT": "FERRO_API_PORT sets [api]port, which ferro has",
		"api.port":       `"api.port" is not [section], [section]option or FERRO_NAME`,
	} {
		path := writeConf(t, "[DEFAULT]\n\nignored_options = "+entry+"\n")
		if _, _, err := Load(path, nil, testHardware); err == nil || !strings.Contains(err.Error(), path+":3: [DEFAULT]ignored_options: "+want) {
			t.Errorf("ignored_options = %s: %v, want %q", entry, err, want)
		}
	}
	// From the environment, it is named by its variable.
	if _, _, err := Load("", []string{"FERRO_DEFAULT_IGNORED_OPTIONS=[api]port"}, testHardware); err == nil || !strings.Contains(err.Error(), "FERRO_DEFAULT_IGNORED_OPTIONS: [DEFAULT]ignored_options") {
		t.Errorf("from the environment: %v", err)
	}
	// An option whose omission would be less safe stays refused.
	path := writeConf(t, "[DEFAULT]\nignored_options = [ssl]ca_file\n[ssl]\nca_file = /etc/ca.pem\n")
	if _, _, err := Load(path, nil, testHardware); err == nil || !strings.Contains(err.Error(), "ferro does not implement [ssl]ca_file") {
		t.Errorf("ignored [ssl]ca_file: %v", err)
	}
}

// An empty section sets nothing: Debian's ironic.conf has dozens.
func TestLoad_EmptyUnknownSectionIsHarmless(t *testing.T) {
	path := writeConf(t, "[agent]\n[drac]\n# comment\n[api]\nport = 7000\n")
	if cfg, _, err := Load(path, nil, testHardware); err != nil || cfg.API.Port != 7000 {
		t.Errorf("Load = %v", err)
	}
}

// Every FERRO_ name used in the repository (code, scripts, docs) is an
// option, or one of NotOptions, so that neither a harness variable refuses
// ferro's start nor an option is mistaken for one.
func TestEveryFerroVariableInTheTreeIsKnown(t *testing.T) {
	env := map[string]bool{}
	forEachOption(func(section, option string, _ reflect.StructField) { env[envName(section, option)] = true })
	notVariables := map[string]string{
		"FERRO_RAMDISK":      "the ISO's volume label (internal/ramdisk)",
		"FERRO_ESP":          "the EFI system partition's label (internal/ramdisk)",
		"FERRO_NAME":         "the placeholder of ignored_options's messages",
		"FERRO_API_HOST_IPP": "the README's example of a mistyped variable",
	}
	name := regexp.MustCompile(`FERRO_[A-Z0-9_]*[A-Z0-9]`)
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		// The tests of the checking itself use wrong names on purpose.
		if strings.HasSuffix(rel, "_test.go") && (filepath.Dir(rel) == filepath.Join("internal", "config") || filepath.Dir(rel) == filepath.Join("cmd", "ferro")) {
			return nil
		}
		ext := filepath.Ext(rel)
		if !slices.Contains([]string{".go", ".sh", ".md", ".conf", ".txt"}, ext) && d.Name() != "Makefile" && d.Name() != "run" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllString(string(data), -1) {
			if env[m] || slices.Contains(NotOptions, m) || notVariables[m] != "" || isPrefix(m, env) {
				continue
			}
			t.Errorf("%s uses %s, which is neither an option nor in config.NotOptions: ferro serve would refuse to start with it set", rel, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// isPrefix: m is how code builds names or docs speak of several
// (FERRO_IRONIC + "_…", FERRO_TEMPEST_*).
func isPrefix(m string, env map[string]bool) bool {
	for _, e := range slices.Concat(sortedKeys(env), NotOptions) {
		if strings.HasPrefix(e, m+"_") {
			return true
		}
	}
	return false
}
