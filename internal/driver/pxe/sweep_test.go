package pxe

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
)

func TestSweepBootFiles_RemovesTheNodesNotKeptAndDanglingEntries(t *testing.T) {
	for _, kind := range []Kind{PXE, IPXE} {
		t.Run(string(kind), func(t *testing.T) {
			e := newEnv(t)
			b := e.boot(t, kind)
			root, prefix := e.tftp, "01-"
			if kind == IPXE {
				root, prefix = e.http, ""
			}
			ctx := context.Background()
			kept := e.task()
			if err := b.PrepareRamdisk(ctx, kept, callbackParams()); err != nil {
				t.Fatal(err)
			}
			stale := e.task()
			stale.Node.UUID = otherUUID
			stale.Ports = []*baremetal.Port{{UUID: "o1", Address: "52:54:00:00:00:99", PXEEnabled: true}}
			if err := b.PrepareRamdisk(ctx, stale, callbackParams()); err != nil {
				t.Fatal(err)
			}
			// An entry whose node directory someone removed by hand.
			dangling := filepath.Join(root, "pxelinux.cfg", prefix+"52-54-00-00-00-77")
			if err := os.Symlink("../7e1a0f5c-0000-4000-8000-000000000077/config", dangling); err != nil {
				t.Fatal(err)
			}

			var asked []string
			swept, err := b.SweepBootFiles(ctx, func(_ context.Context, id string) bool {
				asked = append(asked, id)
				return id == nodeUUID
			})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(asked)
			want := []string{nodeUUID, otherUUID}
			slices.Sort(want)
			if !slices.Equal(asked, want) {
				t.Errorf("keep asked for %v, want the two node directories %v", asked, want)
			}
			if !slices.Equal(swept, []string{otherUUID}) {
				t.Errorf("swept %v, want %v", swept, []string{otherUUID})
			}
			for _, p := range []string{filepath.Join(root, otherUUID), filepath.Join(root, "pxelinux.cfg", prefix+"52-54-00-00-00-99"), dangling} {
				if exists(p) {
					t.Errorf("%s left behind", p)
				}
			}
			for _, p := range []string{filepath.Join(root, nodeUUID, "config"), filepath.Join(root, "pxelinux.cfg", prefix+"52-54-00-12-34-56")} {
				if !exists(p) {
					t.Errorf("%s of the kept node was removed", p)
				}
			}
			if kind == IPXE && !exists(filepath.Join(root, "boot.ipxe")) {
				t.Error("boot.ipxe is shared and must stay")
			}
			// Nothing left to sweep: a second run removes nothing.
			if swept, err := b.SweepBootFiles(ctx, func(context.Context, string) bool { return true }); err != nil || len(swept) != 0 {
				t.Errorf("second sweep: %v, %v", swept, err)
			}
		})
	}
}

func TestSweepBootFiles_NoRootIsFine(t *testing.T) {
	e := newEnv(t)
	e.opts.TFTPRoot = filepath.Join(t.TempDir(), "never-made")
	b := e.boot(t, PXE)
	if swept, err := b.SweepBootFiles(context.Background(), func(context.Context, string) bool { return false }); err != nil || len(swept) != 0 {
		t.Errorf("sweep of a missing root: %v, %v", swept, err)
	}
}
