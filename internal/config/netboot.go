package config

// Netboot is [netboot]: the built-in DHCP, TFTP and HTTP boot servers that
// `ferro serve` runs when [dhcp]dhcp_provider is builtin.
type Netboot struct {
	// Interface is the network interface DHCP listens on (required).
	Interface string `ini:"interface"`
	// ListenAddress is this server's IPv4 address on Interface: the
	// next-server and DHCP server identifier, and where TFTP listens.
	ListenAddress string `ini:"listen_address"`
	// Mode is "dhcp" (hand out addresses from the range) or "proxy"
	// (proxyDHCP: PXE options only; the site's DHCP gives the address).
	Mode string `ini:"mode"`
	// RangeStart and RangeEnd bound the addresses handed out (mode dhcp).
	RangeStart string   `ini:"range_start"`
	RangeEnd   string   `ini:"range_end"`
	Netmask    string   `ini:"netmask"`
	Router     string   `ini:"router"`
	DNS        []string `ini:"dns" delim:","`
	// LeaseTime is the lease duration in seconds.
	LeaseTime int `ini:"lease_time"`
	// DHCPPort is the DHCP server port (67; proxyDHCP also listens on 4011).
	DHCPPort int `ini:"dhcp_port"`
	// TFTPPort is the TFTP port; 0 disables the TFTP server.
	TFTPPort int `ini:"tftp_port"`
	// TFTPMaxTransfers bounds concurrent TFTP transfers.
	TFTPMaxTransfers int `ini:"tftp_max_transfers"`
	// TFTPSinglePort serves every transfer from the TFTP port itself (one
	// port to open in a firewall) instead of a new port per transfer,
	// which is faster with many clients at once.
	TFTPSinglePort bool `ini:"tftp_single_port"`
	// TFTPTimeout is the per-packet TFTP timeout in seconds.
	TFTPTimeout int `ini:"tftp_timeout"`
	// TFTPBlksize caps the negotiated TFTP blksize (also clamped to the
	// interface MTU); TFTPWindowsize caps the RFC 7440 windowsize.
	TFTPBlksize    int `ini:"tftp_blksize"`
	TFTPWindowsize int `ini:"tftp_windowsize"`
	// TFTPTransferTimeout bounds one TFTP transfer, in seconds.
	TFTPTransferTimeout int `ini:"tftp_transfer_timeout"`
	// TFTP bounds against forged, abandoned and flooding clients
	// (tftp.Limits): unacknowledged transfers, transfers and requests a
	// second per client address, the largest timeout option granted (s),
	// the wait for a first ACK and for progress (s), the bytes of a
	// window, and what may be sent before a first ACK, in multiples of the
	// request (0: no bound).
	TFTPMaxUnacknowledged     int `ini:"tftp_max_unacknowledged"`
	TFTPMaxTransfersPerClient int `ini:"tftp_max_transfers_per_client"`
	TFTPClientRequestRate     int `ini:"tftp_client_request_rate"`
	TFTPMaxClientTimeout      int `ini:"tftp_max_client_timeout"`
	TFTPFirstACKTimeout       int `ini:"tftp_first_ack_timeout"`
	TFTPStallTimeout          int `ini:"tftp_stall_timeout"`
	TFTPWindowBytes           int `ini:"tftp_window_bytes"`
	TFTPMaxAmplification      int `ini:"tftp_max_amplification"`
	// DHCPMaxLeasesPerNode bounds the addresses one node's MACs hold.
	DHCPMaxLeasesPerNode int `ini:"dhcp_max_leases_per_node"`
	// NodeFilesAnyClient serves a node's own boot files (config, kernel,
	// initramfs) to any client instead of only to the addresses leased to
	// (proxy mode: requested by) the node's MACs.
	NodeFilesAnyClient bool `ini:"node_files_any_client"`
	// IPv6RA answers router solicitations with a minimal router
	// advertisement, so that iPXE does not wait for IPv6 configuration.
	IPv6RA bool `ini:"ipv6_ra"`
}

func defaultNetboot() Netboot {
	return Netboot{
		Mode:                "dhcp",
		LeaseTime:           3600,
		DHCPPort:            67,
		TFTPPort:            69,
		TFTPMaxTransfers:    64,
		TFTPTimeout:         5,
		TFTPSinglePort:      true,
		TFTPBlksize:         1468,
		TFTPWindowsize:      16,
		TFTPTransferTimeout: 600,
		// The tftp and dhcp packages' defaults.
		TFTPMaxUnacknowledged:     1024,
		TFTPMaxTransfersPerClient: 4,
		TFTPClientRequestRate:     20,
		TFTPMaxClientTimeout:      5,
		TFTPFirstACKTimeout:       3,
		TFTPStallTimeout:          10,
		TFTPWindowBytes:           64 << 10,
		TFTPMaxAmplification:      10,
		DHCPMaxLeasesPerNode:      8,
		IPv6RA:                    true,
	}
}
