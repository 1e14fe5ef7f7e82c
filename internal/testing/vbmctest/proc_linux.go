package vbmctest

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill ferro-vbmc if the test binary dies, so
// no BMC (nor, through ferro-vbmc's own Pdeathsig, a VM) outlives its test.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
