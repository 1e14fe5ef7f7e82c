package sql

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/store"
)

func TestIntrospectionData_StoredCompressed(t *testing.T) {
	db := openTestSQLite(t)
	ctx := context.Background()
	report := []byte(`{"inventory": {"interfaces": [` + strings.Repeat(`{"name": "eth0", "mac_address": "52:54:00:12:34:56", "ipv4_address": null}, `, 200) + `{}]}}`)
	if err := db.SaveIntrospection(ctx, &store.Introspection{NodeUUID: "n1"}, store.IntrospectionData{Kind: "raw", Data: report}); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := db.read.QueryRowContext(ctx, "SELECT data FROM introspection_data WHERE node_uuid = 'n1'").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(stored, s2Magic) || len(stored)*10 > len(report) {
		t.Errorf("stored %d bytes for a %d-byte report (prefix % x), want an S2 block a tenth the size or less", len(stored), len(report), stored[:4])
	}
	got, err := db.GetIntrospectionData(ctx, "n1", "raw")
	if err != nil || !bytes.Equal(got, report) {
		t.Errorf("GetIntrospectionData = %.40q…, %v; want the report as saved", got, err)
	}
}

func TestIntrospectionData_ReadsRowsWrittenBeforeCompression(t *testing.T) {
	db := openTestSQLite(t)
	ctx := context.Background()
	plain := []byte(`{"inventory": {}}`)
	if _, err := db.exec(ctx, "INSERT INTO introspection_data (node_uuid, kind, data) VALUES ($1, $2, $3)", "n1", "raw", plain); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetIntrospectionData(ctx, "n1", "raw")
	if err != nil || !bytes.Equal(got, plain) {
		t.Errorf("GetIntrospectionData = %q, %v; want %q", got, err, plain)
	}
}

func TestIntrospectionData_DamagedRowIsAnError(t *testing.T) {
	db := openTestSQLite(t)
	ctx := context.Background()
	frame := compressData([]byte(strings.Repeat(`{"a": 1}`, 100)))
	damaged := append(bytes.Clone(frame[:len(frame)/2]), 0xff, 0xff)
	if _, err := db.exec(ctx, "INSERT INTO introspection_data (node_uuid, kind, data) VALUES ($1, $2, $3)", "n1", "raw", damaged); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetIntrospectionData(ctx, "n1", "raw"); err == nil || !strings.Contains(err.Error(), "decompress") {
		t.Errorf("GetIntrospectionData of a damaged row = %.40q, %v; want a decompress error", got, err)
	}
}
