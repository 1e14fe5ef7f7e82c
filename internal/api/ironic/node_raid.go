package ironic

import (
	"context"
	"net/http"
	"slices"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// setRAIDConfig is PUT /v1/nodes/{node}/states/raid: the body is the
// target RAID configuration, stored for the next cleaning.
func (s *server) setRAIDConfig(rq *request) error {
	if _, err := rq.queryArgs(); err != nil {
		return err
	}
	v, err := rq.readJSON()
	if err != nil {
		return err
	}
	cfg, ok := v.(map[string]any)
	if !ok {
		return badRequest("Expected types <class 'dict'> for target_raid_config: %s", pyRepr(v))
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if rq.minor < v12RAIDConfig {
		return notAcceptable()
	}
	if iface := n.Interfaces["raid"]; iface == "" || iface == "no-raid" {
		return notFound("Driver %s does not support raid (disabled or not implemented).", n.Driver)
	}
	if err := validateRAIDConfig(cfg); err != nil {
		return err
	}
	err = s.withNodeLock(rq, rq.r.PathValue("node"), func(ctx context.Context, tx store.Store, n *baremetal.Node) error {
		if len(cfg) == 0 {
			n.TargetRAIDConfig = nil
		} else {
			n.TargetRAIDConfig = cfg
		}
		return tx.UpdateNode(ctx, n)
	})
	if err != nil {
		return err
	}
	return rq.writeEmpty(http.StatusNoContent)
}

var raidLevels = []string{"0", "1", "2", "5", "6", "1+0", "5+0", "6+0", "JBOD"}

// validateRAIDConfig checks the shape Ironic's RAID schema requires: a
// logical_disks list whose entries have size_gb and raid_level.
func validateRAIDConfig(cfg map[string]any) error {
	if len(cfg) == 0 {
		return nil
	}
	bad := func(format string, args ...any) error {
		return badRequest("RAID config validation error: "+format, args...)
	}
	for k := range cfg {
		if k != "logical_disks" {
			return bad("Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	disks, ok := cfg["logical_disks"].([]any)
	if !ok {
		return bad("'logical_disks' is a required property and must be an array")
	}
	if len(disks) == 0 {
		return bad("[] is too short")
	}
	for i, d := range disks {
		disk, ok := d.(map[string]any)
		if !ok {
			return bad("logical disk %d is not an object", i)
		}
		size, ok := disk["size_gb"]
		if !ok {
			return bad("'size_gb' is a required property")
		}
		if sz, isStr := size.(string); isStr {
			if sz != "MAX" {
				return bad("%s is not valid under any of the given schemas", pyRepr(size))
			}
		} else if n, ok := toInt(size); !ok || n < 0 {
			return bad("%s is not valid under any of the given schemas", pyRepr(size))
		}
		level, ok := disk["raid_level"].(string)
		if !ok {
			return bad("'raid_level' is a required property")
		}
		if !slices.Contains(raidLevels, level) {
			return bad("%s is not one of %s", pyRepr(level), pyRepr(anySlice(raidLevels)))
		}
	}
	return nil
}
