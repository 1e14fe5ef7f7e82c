package inventory

// DecodeBytesStd is DecodeBytes with encoding/json as the parser, for the
// benchmarks that measure what the hand-written parser gains.
func DecodeBytesStd(b []byte, lim Limits) (*Report, map[string]any, error) {
	return decodeBytes(b, lim, false)
}
