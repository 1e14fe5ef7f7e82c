package lldp

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// seedTLVLists adds the lldp_raw lists of every fixture.
func seedTLVLists(f *testing.F) [][]TLV {
	files, err := filepath.Glob(filepath.Join(fixtures, "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	var lists [][]TLV
	for _, file := range files {
		for _, tlvs := range lldpRaw(f, filepath.Base(file)) {
			lists = append(lists, tlvs)
		}
	}
	return lists
}

// FuzzParseTLVs feeds TLV lists in their JSON form ([[type, "hex"], …]) to
// Parse: it must never panic, must warn at most once per TLV, and what it
// produces must survive a JSON round trip unchanged.
//
//	go test ./internal/lldp -run='^$' -fuzz=FuzzParseTLVs -fuzztime=10s
func FuzzParseTLVs(f *testing.F) {
	for _, tlvs := range seedTLVLists(f) {
		b, err := json.Marshal(tlvs)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`[[127,"0080c203006410"],[8,"05"],[1,"05"],[2,"0"]]`))

	f.Fuzz(func(t *testing.T, in []byte) {
		var tlvs []TLV
		if err := json.Unmarshal(in, &tlvs); err != nil {
			return
		}
		p, warnings := Parse(tlvs)
		if len(warnings) > len(tlvs) {
			t.Fatalf("%d warnings for %d TLVs", len(warnings), len(tlvs))
		}
		checkRoundTrip(t, p)
	})
}

// FuzzParsePDU splits arbitrary bytes as an LLDPDU and parses the result,
// checking that the split TLVs re-encode to the bytes they came from.
//
//	go test ./internal/lldp -run='^$' -fuzz=FuzzParsePDU -fuzztime=10s
func FuzzParsePDU(f *testing.F) {
	for _, tlvs := range seedTLVLists(f) {
		var pdu []byte
		for _, tlv := range tlvs {
			v, err := hex.DecodeString(tlv.Value)
			if err != nil || tlv.Type > 127 || len(v) > 511 {
				continue
			}
			pdu = append(pdu, byte(tlv.Type<<1)|byte(len(v)>>8), byte(len(v)))
			pdu = append(pdu, v...)
		}
		f.Add(pdu)
	}

	f.Fuzz(func(t *testing.T, pdu []byte) {
		tlvs, _ := SplitPDU(pdu)
		var again []byte
		for _, tlv := range tlvs {
			v, err := tlv.Bytes()
			if err != nil {
				t.Fatalf("SplitPDU produced bad hex: %v", err)
			}
			again = append(again, byte(tlv.Type<<1)|byte(len(v)>>8), byte(len(v)))
			again = append(again, v...)
		}
		if !bytes.HasPrefix(pdu, again) {
			t.Fatalf("TLVs %v do not re-encode to a prefix of the PDU", tlvs)
		}
		p, warnings := Parse(tlvs)
		if len(warnings) > len(tlvs) {
			t.Fatalf("%d warnings for %d TLVs", len(warnings), len(tlvs))
		}
		checkRoundTrip(t, p)
	})
}

func checkRoundTrip(t *testing.T, p Processed) {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("marshal %+v: %v", p, err)
	}
	var back Processed
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Fatalf("JSON round trip of %s (-want +got):\n%s", b, diff)
	}
}
