package config

// IPMI is [ipmi]: how the ipmitool power and management interfaces talk to
// BMCs. Names and defaults are Ironic's.
type IPMI struct {
	// CommandRetryTimeout is how long, in seconds, a failing IPMI operation is retried.
	CommandRetryTimeout int `ini:"command_retry_timeout"`
	// MinCommandInterval is the least time, in seconds, between two
	// operations sent to one BMC.
	MinCommandInterval int `ini:"min_command_interval"`
	// DisableBootTimeout sends Set System Boot Options parameter 3 before
	// setting a boot device, so the BMC keeps it past 60 s; a node's
	// driver_info[ipmi_disable_boot_timeout] overrides it.
	DisableBootTimeout bool `ini:"disable_boot_timeout"`
}

func defaultIPMI() IPMI {
	return IPMI{CommandRetryTimeout: 60, MinCommandInterval: 5, DisableBootTimeout: true}
}
