package config

// Redfish is [redfish], with Ironic's option names and defaults.
type Redfish struct {
	// ConnectionAttempts is how many times a request to a BMC is tried
	// when the connection fails or the BMC answers 5xx.
	ConnectionAttempts int `ini:"connection_attempts"`
	// ConnectionRetryInterval is the first wait between two attempts, in
	// seconds; it doubles after every failed attempt.
	ConnectionRetryInterval int `ini:"connection_retry_interval"`
	// ConnectionCacheSize bounds the BMC connections (and sessions) kept open.
	ConnectionCacheSize int `ini:"connection_cache_size"`
	// AuthType is the default of driver_info[redfish_auth_type]: basic, session or auto.
	AuthType string `ini:"auth_type"`
	// KernelAppendParams are added to the kernel command line of a virtual
	// media ramdisk, before the inspection parameters.
	KernelAppendParams string `ini:"kernel_append_params"`
}

// redfishDefaults are Ironic's.
func redfishDefaults() Redfish {
	return Redfish{
		ConnectionAttempts:      5,
		ConnectionRetryInterval: 4,
		ConnectionCacheSize:     1000,
		AuthType:                "auto",
		KernelAppendParams:      "nofb nomodeset vga=normal",
	}
}
