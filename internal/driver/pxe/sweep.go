package pxe

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferrometal/ferro/internal/driver"
)

// SweepBootFiles removes what PrepareRamdisk left under the boot root for
// every node keep rejects — its directory and its MAC entries — and MAC
// entries that point at no node directory. A conductor calls it at start:
// the teardown of a node a dead conductor left is run by the one that takes
// the node over, on its own boot root, so files can outlive their
// inspection; a stale per-MAC entry would boot the node into the inspection
// ramdisk the next time it PXE-boots. keep is asked once per node
// directory, right before the removal. It returns the nodes it cleaned.
func (b *Boot) SweepBootFiles(ctx context.Context, keep func(ctx context.Context, nodeUUID string) bool) ([]string, error) {
	root := b.root()
	if root == "" || !filepath.IsAbs(root) {
		return nil, nil
	}
	entries, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep boot files under %s: %w", root, err)
	}
	var swept []string
	var errs []error
	for _, e := range entries {
		uuid := e.Name()
		if !e.IsDir() || !uuidRE.MatchString(uuid) || keep(ctx, uuid) {
			continue
		}
		if err := unlinkMACs(root, uuid, nil); err != nil {
			errs = append(errs, err)
		}
		if err := os.RemoveAll(filepath.Join(root, uuid)); err != nil {
			errs = append(errs, err)
			continue
		}
		swept = append(swept, uuid)
	}
	if err := removeDanglingEntries(root); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return swept, fmt.Errorf("sweep boot files under %s: %w", root, err)
	}
	return swept, nil
}

// removeDanglingEntries removes the pxelinux.cfg/ symlinks whose target
// is gone, such as those of a node directory removed by hand.
func removeDanglingEntries(root string) error {
	dir := filepath.Join(root, macDir)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

var _ driver.BootFileSweeper = (*Boot)(nil)
