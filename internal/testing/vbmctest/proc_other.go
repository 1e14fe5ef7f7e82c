//go:build !linux

package vbmctest

import "os/exec"

func setProcAttr(cmd *exec.Cmd) {}
