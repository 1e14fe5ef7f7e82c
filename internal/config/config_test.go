package config

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testHardware stands for the driver registry's hardware types.
var testHardware = Hardware{
	Types:      []string{"fake-hardware", "ipmi"},
	Interfaces: map[string][]string{"network": {"noop", "flat", "neutron"}, "power": {"fake", "ipmitool"}, "raid": {"fake", "no-raid"}},
}

// The enabled_* defaults are the hardware types' and their interfaces;
// the configuration has no list of its own.
func TestDefaults_EnableTheHardwareGiven(t *testing.T) {
	cfg, _, err := Load("", nil, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(testHardware.Types, cfg.Default.EnabledHardwareTypes); diff != "" {
		t.Errorf("enabled_hardware_types (-want +got):\n%s", diff)
	}
	for kind, want := range testHardware.Interfaces {
		if diff := cmp.Diff(want, cfg.Default.Enabled(kind)); diff != "" {
			t.Errorf("enabled_%s_interfaces (-want +got):\n%s", kind, diff)
		}
	}
	if got := cfg.Default.Enabled("boot"); len(got) != 0 {
		t.Errorf("enabled_boot_interfaces = %v, want none: no hardware type gives one", got)
	}
	if _, _, err := Load("", []string{"FERRO_DEFAULT_DEFAULT_POWER_INTERFACE=ipmitool"}, testHardware); err != nil {
		t.Errorf("a default among the given interfaces: %v", err)
	}
}

func TestLoad_DefaultsNeedNoFile(t *testing.T) {
	cfg, unknown, err := Load("", nil, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if len(unknown) != 0 {
		t.Errorf("unknown = %v", unknown)
	}
	if cfg.API.HostIP != "127.0.0.1" || cfg.API.Port != 6385 {
		t.Errorf("api = %+v", cfg.API)
	}
	if cfg.Inspector.ListenPort != 5050 || cfg.Conductor.InspectWaitTimeout != 1800 {
		t.Errorf("inspector/conductor defaults wrong: %+v %+v", cfg.Inspector, cfg.Conductor)
	}
}

func TestLoad_FileThenEnvironment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ferro.conf")
	conf := `[DEFAULT]
host = c1
ignored_options = [keystone_authtoken]memcache_pool_maxsize, FERRO_FUTURE_OPTION
enabled_network_interfaces = noop, flat
default_network_interface = flat
[api]
port = 7000
[conductor]
workers_pool_size = 8
[processing]
processing_hooks = $default_processing_hooks, extra_hardware
[neutron]
password = s3cret
[keystone_authtoken]
memcache_pool_maxsize = 10
`
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, ignored, err := Load(path, []string{"FERRO_API_PORT=7001", "FERRO_API_HOST_IP=0.0.0.0", "FERRO_PCI_DEVICES_ALIAS={\"name\":\"a\"}", "FERRO_FUTURE_OPTION=1", "FERRO_BIN=/bin/ferro"}, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"[keystone_authtoken]memcache_pool_maxsize", "FERRO_FUTURE_OPTION"}, ignored); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	if cfg.API.Port != 7001 || cfg.API.HostIP != "0.0.0.0" {
		t.Errorf("env did not override: %+v", cfg.API)
	}
	if cfg.Default.Host != "c1" || cfg.Conductor.WorkersPoolSize != 8 {
		t.Errorf("file not applied: %+v", cfg.Default.Host)
	}
	if diff := cmp.Diff([]string{"noop", "flat"}, cfg.Default.Enabled("network")); diff != "" {
		t.Errorf("enabled network (-want +got):\n%s", diff)
	}
	if cfg.Default.DefaultFor("network") != "flat" {
		t.Errorf("default network = %q", cfg.Default.DefaultFor("network"))
	}
	hooks := cfg.Processing.Hooks()
	if hooks[0] != "ramdisk_error" || hooks[len(hooks)-1] != "extra_hardware" {
		t.Errorf("hooks = %v", hooks)
	}
	if len(cfg.PCIDevices.Alias) != 1 {
		t.Errorf("alias = %v", cfg.PCIDevices.Alias)
	}
	for _, o := range cfg.Options() {
		if strings.Contains(o[1], "s3cret") {
			t.Errorf("secret shown in %s", o[0])
		}
	}
}

func TestLoad_RejectsBadValues(t *testing.T) {
	for name, env := range map[string]string{
		"port not a number":   "FERRO_API_PORT=abc",
		"bool not a bool":     "FERRO_INSPECTOR_POWER_OFF=maybe",
		"enum":                "FERRO_PROCESSING_ADD_PORTS=some",
		"default not enabled": "FERRO_DEFAULT_DEFAULT_NETWORK_INTERFACE=bogus",
		"port out of range":   "FERRO_API_PORT=70000",
		"host ip not an ip":   "FERRO_API_HOST_IP=not an ip",
		"pool size below one": "FERRO_CONDUCTOR_WORKERS_POOL_SIZE=0",
		"interval not number": "FERRO_IPMI_MIN_COMMAND_INTERVAL=fast",
		"interval negative":   "FERRO_IPMI_MIN_COMMAND_INTERVAL=-1",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := Load("", []string{env}, testHardware); err == nil {
				t.Errorf("Load with %s: no error", env)
			}
		})
	}
}

func TestLoad_MinCommandIntervalTakesAFraction(t *testing.T) {
	cfg, _, err := Load("", []string{"FERRO_IPMI_MIN_COMMAND_INTERVAL=0.2"}, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IPMI.MinCommandInterval != 0.2 {
		t.Errorf("[ipmi]min_command_interval = %v, want 0.2", cfg.IPMI.MinCommandInterval)
	}
}

func TestLoad_RedfishDefaultsAndValidation(t *testing.T) {
	cfg, _, err := Load("", nil, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if r := cfg.Redfish; r.ConnectionAttempts != 5 || r.ConnectionRetryInterval != 4 || r.AuthType != "auto" || r.ConnectionCacheSize != 1000 {
		t.Errorf("[redfish] defaults %+v, want Ironic's", r)
	}
	if _, _, err := Load("", []string{"FERRO_REDFISH_AUTH_TYPE=kerberos"}, testHardware); err == nil || !strings.Contains(err.Error(), "[redfish]auth_type") {
		t.Errorf("bad auth type: %v", err)
	}
	if _, _, err := Load("", []string{"FERRO_REDFISH_CONNECTION_ATTEMPTS=0"}, testHardware); err == nil || !strings.Contains(err.Error(), "connection_attempts") {
		t.Errorf("zero attempts: %v", err)
	}
}

// [inspector], [ironic] and [neutron] share one ClientAuth: every one of
// its options loads into each section, from the file and the environment,
// and the secrets are masked.
func TestLoad_ClientAuthInEverySection(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ferro.conf")
	conf := "[inspector]\nauth_type = password\nauth_url = http://k:5000/v3\npassword = p1\n" +
		"[ironic]\nauth_type = token\ntoken = t2\ninsecure = true\n" +
		"[neutron]\nauth_type = http_basic\nusername = n\ncafile = /etc/ca.pem\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, unknown, err := Load(path, []string{"FERRO_NEUTRON_SYSTEM_SCOPE=all", "FERRO_IRONIC_REGION_NAME=r1"}, testHardware)
	if err != nil || len(unknown) > 0 {
		t.Fatalf("Load = %v, unknown %v", err, unknown)
	}
	for name, got := range map[string]ClientAuth{"inspector": cfg.Inspector.ClientAuth, "ironic": cfg.Ironic.ClientAuth, "neutron": cfg.Neutron.ClientAuth} {
		want := map[string]ClientAuth{
			"inspector": {AuthType: "password", AuthURL: "http://k:5000/v3", Password: "p1"},
			"ironic":    {AuthType: "token", Token: "t2", Insecure: true, RegionName: "r1"},
			"neutron":   {AuthType: "http_basic", Username: "n", CAFile: "/etc/ca.pem", SystemScope: "all"},
		}[name]
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("[%s] client auth (-want +got):\n%s", name, diff)
		}
	}
	for _, o := range cfg.Options() {
		if o[1] == "p1" || o[1] == "t2" {
			t.Errorf("%s shows its secret", o[0])
		}
	}
}

// [inspector]require_managed_boot is unset by default, so that each
// interface has its upstream's default; set, it is read as given, and a
// word that is no boolean is refused. The agent interface's sections
// have Ironic's defaults.
func TestLoad_AgentInterfaceOptions(t *testing.T) {
	cfg, _, err := Load("", nil, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Inspector.RequireManagedBoot != nil || !cfg.Inspector.PreCreatePorts || cfg.Inspector.ForceDHCP ||
		!cfg.API.EnableRamdiskEndpoints || cfg.API.MaxJSONBodySizeInspection != 16384 || cfg.AutoDiscovery.Enabled ||
		cfg.PXEFilter.SyncPeriod != 45 || cfg.Agent.DeployLogsCollect != "on_failure" {
		t.Errorf("defaults: %+v %+v %+v %+v %+v", cfg.Inspector, cfg.API, cfg.AutoDiscovery, cfg.PXEFilter, cfg.Agent)
	}
	for _, v := range []string{"false", "true"} {
		cfg, _, err := Load("", []string{"FERRO_INSPECTOR_REQUIRE_MANAGED_BOOT=" + v}, testHardware)
		if err != nil {
			t.Fatal(err)
		}
		if b := cfg.Inspector.RequireManagedBoot; b == nil || *b != (v == "true") {
			t.Errorf("require_managed_boot=%s read as %v", v, b)
		}
	}
	for _, env := range []string{"FERRO_INSPECTOR_REQUIRE_MANAGED_BOOT=sometimes", "FERRO_AUTO_DISCOVERY_ENABLED=true",
		"FERRO_AGENT_DEPLOY_LOGS_COLLECT=sometimes", "FERRO_AGENT_DEPLOY_LOGS_STORAGE_BACKEND=swift", "FERRO_PXE_FILTER_SYNC_PERIOD=0"} {
		if _, _, err := Load("", []string{env}, testHardware); err == nil {
			t.Errorf("Load with %s: no error", env)
		}
	}
	if _, _, err := Load("", []string{"FERRO_AUTO_DISCOVERY_ENABLED=true", "FERRO_AUTO_DISCOVERY_DRIVER=ipmi"}, testHardware); err != nil {
		t.Errorf("discovery with a driver: %v", err)
	}
}

// Automated cleaning's runbook options: Ironic's defaults, the DictOpt by
// resource class parsed as oslo.config parses it, bad values refused.
func TestLoad_AutomatedCleaningRunbookOptions(t *testing.T) {
	cfg, _, err := Load("", nil, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.Conductor; !c.AutomatedClean || c.AutomatedCleaningStepSource != "autogenerated" || c.AutomatedCleaningRunbook != "" ||
		c.AutomatedCleaningRunbookFromNode || !c.AutomatedCleaningRunbookValidateTraits {
		t.Errorf("defaults %+v, want Ironic's", c)
	}
	cfg, _, err = Load("", []string{"FERRO_CONDUCTOR_AUTOMATED_CLEANING_STEP_SOURCE=hybrid",
		"FERRO_CONDUCTOR_AUTOMATED_CLEANING_RUNBOOK_BY_RESOURCE_CLASS= gpu : CUSTOM_GPU_WIPE ,baremetal:8d7e37a5-4f9c-4b3a-9d6e-0c7b8f1f2a3b"}, testHardware)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cfg.Conductor.RunbookByResourceClass()
	if want := map[string]string{"gpu": "CUSTOM_GPU_WIPE", "baremetal": "8d7e37a5-4f9c-4b3a-9d6e-0c7b8f1f2a3b"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("by resource class %v, %v; want %v", got, err, want)
	}
	for _, env := range []string{
		"FERRO_CONDUCTOR_AUTOMATED_CLEANING_STEP_SOURCE=sometimes",
		"FERRO_CONDUCTOR_AUTOMATED_CLEANING_RUNBOOK_BY_RESOURCE_CLASS=gpu",
		"FERRO_CONDUCTOR_AUTOMATED_CLEANING_RUNBOOK_BY_RESOURCE_CLASS=gpu:a,gpu:b",
		"FERRO_CONDUCTOR_AUTOMATED_CLEANING_RUNBOOK_BY_RESOURCE_CLASS=:a",
	} {
		if _, _, err := Load("", []string{env}, testHardware); err == nil || !strings.Contains(err.Error(), "[conductor]automated_cleaning_") {
			t.Errorf("%s: %v, want it refused", env, err)
		}
	}
}
