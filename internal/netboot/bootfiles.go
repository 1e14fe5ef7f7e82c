package netboot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/netboot/bootfs"
	"github.com/ferrometal/ferro/internal/netboot/dhcp"
	"github.com/ferrometal/ferro/internal/netboot/httpboot"
	"github.com/ferrometal/ferro/internal/store"
)

// BootFilesOptions configure NewBootFiles.
type BootFilesOptions struct {
	// Root is [deploy]http_root, Prefix the path it is served under
	// (http_url's, "/httpboot/").
	Root, Prefix string
	// AnyClientReadsNodeFiles serves a node's own files whatever its
	// state ([netboot]node_files_any_client).
	AnyClientReadsNodeFiles bool
	Store                   NodeGetter
	Events                  Events
	Log                     *slog.Logger
}

// NodeGetter reads a node (store.Store has it).
type NodeGetter interface {
	GetNode(ctx context.Context, ident string) (*baremetal.Node, error)
}

// BootFiles is [deploy]http_root served without the built-in DHCP
// ([dhcp]dhcp_provider none or neutron): the ISOs a BMC fetches for
// virtual media, and the iPXE files of a site whose own DHCP points its
// machines here, so that no second web server is needed. With no leases
// to tell which address is which machine, a node's own files go to any
// client but only while that node is being inspected, as the built-in
// DHCP's rule has it; ISO names are 128 random bits.
type BootFiles struct {
	*httpboot.Handler
	root *bootfs.Root
}

// NewBootFiles opens the root (creating it).
func NewBootFiles(o BootFilesOptions) (*BootFiles, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Events == nil {
		o.Events = LogEvents{Log: o.Log}
	}
	if err := os.MkdirAll(o.Root, 0o755); err != nil {
		return nil, fmt.Errorf("boot files: create %s: %w", o.Root, err)
	}
	root, err := bootfs.Open(o.Root)
	if err != nil {
		return nil, err
	}
	var access bootfs.Access = inspectingNodes{o.Store}
	if o.AnyClientReadsNodeFiles {
		access = nil
	}
	return &BootFiles{Handler: &httpboot.Handler{Root: root, Prefix: o.Prefix, Events: o.Events, Access: access, Log: o.Log}, root: root}, nil
}

// Close releases the root.
func (b *BootFiles) Close() error { return b.root.Close() }

// inspectingNodes lets any client read the files of a node in inspection.
type inspectingNodes struct{ store NodeGetter }

func (a inspectingNodes) BootFilesAllowed(ctx context.Context, nodeUUID string, _ netip.Addr) (bool, error) {
	n, err := a.store.GetNode(ctx, nodeUUID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read node: %w", err)
	}
	return dhcp.Active(n), nil
}
