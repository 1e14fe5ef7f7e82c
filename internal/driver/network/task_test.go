package network_test

import (
	"context"
	"maps"
	"sync"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

// memStore is a driver.TaskStore that keeps copies of what was saved, and
// can fail saving chosen ports.
type memStore struct {
	mu    sync.Mutex
	ports map[string]baremetal.JSON // port UUID → internal_info as last saved
	fail  map[string]error          // port UUID → error from UpdatePort
	saves int
}

func (s *memStore) UpdateNode(context.Context, *baremetal.Node) error { return nil }

func (s *memStore) UpdatePort(_ context.Context, p *baremetal.Port) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail[p.UUID]; err != nil {
		return err
	}
	s.saves++
	if s.ports == nil {
		s.ports = map[string]baremetal.JSON{}
	}
	s.ports[p.UUID] = maps.Clone(p.InternalInfo)
	return nil
}

// savedVIF is the inspection VIF last saved for a port, or "".
func (s *memStore) savedVIF(portUUID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, _ := s.ports[portUUID][driver.InspectionVIFKey].(string)
	return v
}

func newTask(nodeUUID string, ports ...*baremetal.Port) *driver.Task {
	for _, p := range ports {
		p.NodeUUID = nodeUUID
		if p.InternalInfo == nil {
			p.InternalInfo = baremetal.JSON{}
		}
	}
	return &driver.Task{
		Node:  &baremetal.Node{UUID: nodeUUID, DriverInfo: baremetal.JSON{}},
		Ports: ports,
		Store: &memStore{},
	}
}
