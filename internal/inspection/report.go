package inspection

import (
	"errors"

	"github.com/ferrometal/ferro/internal/inventory"
)

// MaxReportDepth is the deepest JSON nesting a report may have (OSSN-0099).
const MaxReportDepth = 25

// Report is a decoded agent report: typed, and as sent.
type Report struct {
	// Typed is the report in ferro's types; hooks read it.
	Typed *inventory.Report
	// Raw is the report as generic JSON (numbers as json.Number), unknown
	// fields and nulls included: what is stored and what rules see.
	Raw map[string]any
	// Body is the report as it was posted (Decode's input), nil for a
	// report NewReport wrapped.
	Body []byte
}

// Decode decodes a report body, with the bounds every entry point applies
// (see inventory.DecodeBytes); the HTTP layer bounds its size.
func Decode(body []byte) (*Report, error) {
	rep, raw, err := inventory.DecodeBytes(body, inventory.Limits{MaxDepth: MaxReportDepth})
	if err != nil {
		return nil, err
	}
	return &Report{Typed: rep, Raw: raw, Body: body}, nil
}

// NewReport wraps a report that was decoded already; raw may be nil, in
// which case it is derived from rep.
func NewReport(rep *inventory.Report, raw map[string]any) (*Report, error) {
	if rep == nil {
		return nil, errors.New("no report")
	}
	if raw == nil {
		v, ok := jsonValue(rep).(map[string]any)
		if !ok {
			return nil, errors.New("report does not encode to an object")
		}
		raw = v
	}
	return &Report{Typed: rep, Raw: raw}, nil
}
