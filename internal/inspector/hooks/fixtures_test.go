package hooks

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/inventory"
)

const fixtures = "../../../testdata/ipa"

// loadData decodes a payload fixture, optionally edited before decoding.
func loadData(t *testing.T, name string) *Data {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	return decodeData(t, b)
}

func decodeData(t *testing.T, body []byte) *Data {
	t.Helper()
	rep, raw, err := inventory.DecodeBytes(body, inventory.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewData(rep, raw)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// newNode returns a node in inspect wait with properties and ports.
func newNode(t *testing.T, props baremetal.JSON, ports ...baremetal.Port) *Node {
	t.Helper()
	if props == nil {
		props = baremetal.JSON{}
	}
	n, err := NewNode(baremetal.Node{UUID: "1be26c0b-03f2-4d2e-ae87-c02d7f33c123", ProvisionState: "inspect wait", Properties: props}, ports)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func build(t *testing.T, cfg Config, names ...string) []Hook {
	t.Helper()
	hooks, err := Build(names, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return hooks
}

// run runs the hooks' two phases, failing the test on an error.
func run(t *testing.T, hooks []Hook, d *Data, n *Node) {
	t.Helper()
	if err := runErr(hooks, d, n); err != nil {
		t.Fatal(err)
	}
}

func runErr(hooks []Hook, d *Data, n *Node) error {
	if err := RunBeforeProcessing(context.Background(), hooks, d); err != nil {
		return err
	}
	return RunBeforeUpdate(context.Background(), hooks, d, n)
}

func add(path string, value any) PatchOp { return PatchOp{Op: "add", Path: path, Value: value} }
