//go:build !linux

package ferrotest

import "os/exec"

func setProcAttr(cmd *exec.Cmd) {}
