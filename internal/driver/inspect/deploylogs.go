package inspect

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
)

// Values of [agent]deploy_logs_collect.
const (
	LogsAlways    = "always"
	LogsOnFailure = "on_failure"
	LogsNever     = "never"
)

// DeployLogs stores the ramdisk's logs as Ironic's store_ramdisk_logs with
// the local backend: [agent]deploy_logs_collect says when, the files go
// to [agent]deploy_logs_local_path as
// <node uuid>[_<name>][_<instance uuid>]_<label>_<YYYY-mm-dd-HH-MM-SS>.tar.gz.
// Only the report of a node that was looked up (and whose token matched)
// gets there, so an unauthenticated client cannot fill the directory.
type DeployLogs struct {
	Collect string
	Dir     string
}

// wanted says whether logs are stored after a processing that failed or not.
func (d *DeployLogs) wanted(failed bool) bool {
	switch d.Collect {
	case LogsAlways:
		return true
	case LogsOnFailure:
		return failed
	}
	return false
}

// Store writes the logs (base64 of a gzipped tarball) and returns the path.
// The file is readable by ferro's user only: logs hold whatever the
// machine printed.
func (d *DeployLogs) Store(n *baremetal.Node, logs, label string, now time.Time) (string, error) {
	if d.Dir == "" {
		return "", errors.New("[agent]deploy_logs_local_path is not set")
	}
	data, err := base64.StdEncoding.DecodeString(logs)
	if err != nil {
		return "", fmt.Errorf("the logs are not base64: %w", err)
	}
	fields := []string{n.UUID}
	if n.Name != "" {
		fields = append(fields, n.Name)
	}
	if n.InstanceUUID != "" {
		fields = append(fields, n.InstanceUUID)
	}
	if label != "" {
		fields = append(fields, label)
	}
	fields = append(fields, now.UTC().Format("2006-01-02-15-04-05"))
	// A node name cannot hold a "/", but the file name must stay in Dir
	// whatever it holds.
	name := strings.NewReplacer("/", "_", "\x00", "_").Replace(strings.Join(fields, "_")) + ".tar.gz"
	if err := os.MkdirAll(d.Dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(d.Dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", err
	}
	return path, nil
}
