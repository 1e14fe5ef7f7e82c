package sql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/store"
)

// benchNode is a node as an inspected lab machine has it.
func benchNode(i int) *baremetal.Node {
	ifaces := map[string]string{}
	for _, k := range baremetal.InterfaceKinds {
		ifaces[k] = "fake"
	}
	ifaces["boot"], ifaces["power"], ifaces["management"], ifaces["inspect"] = "ipxe", "ipmitool", "ipmitool", "inspector"
	return &baremetal.Node{
		UUID:           uuid.NewString(),
		Name:           fmt.Sprintf("node-%05d", i),
		Driver:         "ipmi",
		ResourceClass:  "baremetal",
		ProvisionState: "manageable",
		PowerState:     baremetal.PowerOff,
		DriverInfo: baremetal.JSON{
			"ipmi_address": "10.0.0.5", "ipmi_username": "admin", "ipmi_password": "secret",
			"ipmi_port": json.Number("623"), "deploy_kernel": "http://10.0.0.1/ipa.kernel",
			"deploy_ramdisk": "http://10.0.0.1/ipa.initramfs",
		},
		DriverInternalInfo: baremetal.JSON{"inspector_manage_boot": false, "last_power_state_change": "2025-03-01T10:00:00"},
		Properties: baremetal.JSON{
			"cpus": json.Number("32"), "cpu_arch": "x86_64", "memory_mb": json.Number("262144"),
			"local_gb": json.Number("446"), "capabilities": "boot_mode:uefi",
		},
		Extra:      baremetal.JSON{"rack": "r4", "slot": json.Number(fmt.Sprint(i % 42))},
		Interfaces: ifaces,
		Traits:     []string{"CUSTOM_RAID", "HW_CPU_X86_AVX2"},
	}
}

func BenchmarkCreateNode(b *testing.B) {
	db := openSQLite(b)
	ctx := context.Background()
	nodes := make([]*baremetal.Node, b.N)
	for i := range nodes {
		nodes[i] = benchNode(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := db.CreateNode(ctx, nodes[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateNodeParallel is many API clients creating nodes at once:
// the SQLite writer commits their inserts in groups.
func BenchmarkCreateNodeParallel(b *testing.B) {
	db := openSQLite(b)
	ctx := context.Background()
	b.SetParallelism(8) // 8 goroutines per CPU
	b.ReportAllocs()
	var seq atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := db.CreateNode(ctx, benchNode(int(seq.Add(1)))); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkGetNode(b *testing.B) {
	db := openSQLite(b)
	ctx := context.Background()
	var ids []string
	for i := range 1000 {
		n := benchNode(i)
		if err := db.CreateNode(ctx, n); err != nil {
			b.Fatal(err)
		}
		ids = append(ids, n.UUID)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, err := db.GetNode(ctx, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkListNodes500(b *testing.B) {
	db := openSQLite(b)
	ctx := context.Background()
	for i := range 2000 {
		if err := db.CreateNode(ctx, benchNode(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		nodes, err := db.ListNodes(ctx, store.NodeFilter{Page: store.Page{Limit: 500}})
		if err != nil || len(nodes) != 500 {
			b.Fatal(len(nodes), err)
		}
	}
}
