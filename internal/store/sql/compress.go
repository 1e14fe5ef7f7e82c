package sql

import (
	"bytes"
	"fmt"

	"github.com/klauspost/compress/s2"
)

// Introspection reports are stored compressed with S2 (a faster Snappy).
// A 40-NIC report and its processed form are some 120 kB of JSON that
// compress about ten times over at gigabytes per second: a fleet's
// database stays a fraction of the size, and on SQLite the single writer
// pushes that much less through the WAL.
//
// A stored report is s2Magic followed by one S2 block. A row without the
// prefix was written before compression, as plain JSON (which cannot start
// with byte 0xff), and is returned as it is.
var s2Magic = []byte("\xffS2\x00")

// maxDataSize bounds what a damaged row can make a reader allocate: the
// inspector takes reports of up to 16 MiB, and processing adds less than
// the report itself.
const maxDataSize = 256 << 20

// compressData returns data as it is stored.
func compressData(data []byte) []byte {
	out := make([]byte, len(s2Magic)+s2.MaxEncodedLen(len(data)))
	copy(out, s2Magic)
	block := s2.Encode(out[len(s2Magic):], data) // in place: out is large enough
	return out[:len(s2Magic)+len(block)]
}

// decompressData returns stored data as it was saved.
func decompressData(stored []byte) ([]byte, error) {
	block, ok := bytes.CutPrefix(stored, s2Magic)
	if !ok {
		return stored, nil
	}
	n, err := s2.DecodedLen(block)
	if err == nil && n > maxDataSize {
		err = fmt.Errorf("%d bytes, more than %d", n, maxDataSize)
	}
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	data, err := s2.Decode(make([]byte, n), block)
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return data, nil
}
