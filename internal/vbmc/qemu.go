package vbmc

import (
	"errors"
	"log/slog"
)

func newQEMUBackend(mc MachineConfig, uuid, dir string, log *slog.Logger) (Backend, error) {
	return nil, errors.New("qemu backend: not implemented yet")
}
