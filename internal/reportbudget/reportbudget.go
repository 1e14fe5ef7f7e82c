// Package reportbudget bounds the memory that the agents' reports take
// while they are read, decoded and processed: a byte budget shared by
// every entry point that takes a report (the inspector's /v1/continue,
// the bare metal API's /v1/continue_inspection), so that however many
// agents post at once, and whatever their reports' shapes, the reports
// in flight fit in it.
//
// A report first reserves what a body of its announced length may cost
// at worst, before a byte is read; once it is read, the reservation is
// lowered to what this body costs (Fit), so the common large report —
// mostly the `logs` collector's one base64 string — does not hold the
// share of one made of half a million small objects. Reservations are
// granted in arrival order (golang.org/x/sync/semaphore), so a large
// report is not starved by a stream of small ones.
package reportbudget

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"golang.org/x/sync/semaphore"

	"github.com/ferrometal/ferro/internal/jsonlimit"
)

// What a report costs, measured for the stock agent's 16 MiB reports
// (test/attack's flood) on the inspector's whole path: the body, the
// decoder's copy of it and the processing's encodings of the data take
// about BodyFactor times the body's size; the decoded values (maps,
// slices, their re-encoding) about ValueCost bytes for each value
// jsonlimit.Values counts.
const (
	BodyFactor = 2
	ValueCost  = 192
)

// Cost is the memory a report of size bytes and values JSON values is
// expected to take until it is answered.
func Cost(size, values int64) int64 { return BodyFactor*size + ValueCost*values }

// DefaultBytes is the default budget ([processing]report_memory_budget):
// with Go's garbage collector letting the heap grow to twice what is
// live, it keeps a process under 512 MiB however many 16 MiB reports
// arrive at once.
const DefaultBytes = 160 << 20

// Options configure a Budget.
type Options struct {
	// Bytes is the budget; 0 means DefaultBytes.
	Bytes int64
	// MaxBody is the largest body a report may have; a body of unknown
	// length reserves what one that large may cost.
	MaxBody int64
	// MaxValues is the most JSON values a report's decoder accepts (a
	// body cannot cost more than that many values' worth).
	MaxValues int64
}

// Budget is the memory shared by the reports in flight.
type Budget struct {
	o   Options
	sem *semaphore.Weighted
}

// New returns a budget of o.Bytes.
func New(o Options) (*Budget, error) {
	if o.Bytes == 0 {
		o.Bytes = DefaultBytes
	}
	if o.Bytes < 0 || o.MaxBody <= 0 || o.MaxValues <= 0 {
		return nil, fmt.Errorf("report memory budget: bytes %d, max body %d and max values %d must be positive", o.Bytes, o.MaxBody, o.MaxValues)
	}
	return &Budget{o: o, sem: semaphore.NewWeighted(o.Bytes)}, nil
}

// Bytes is the size of the budget.
func (b *Budget) Bytes() int64 { return b.o.Bytes }

// worst is the most a body of size bytes can cost: at most one value per
// two bytes ("0,"), and no more than the decoder accepts. A cost past
// the budget is the whole budget: such a report runs alone.
func (b *Budget) worst(size int64) int64 {
	if size <= 0 || size > b.o.MaxBody {
		size = b.o.MaxBody
	}
	return b.clamp(Cost(size, min(size/2+1, b.o.MaxValues)))
}

func (b *Budget) clamp(n int64) int64 { return max(1, min(n, b.o.Bytes)) }

// Reservation is one report's share of the budget.
type Reservation struct {
	b *Budget
	n int64
}

// Reserve waits, in arrival order, until the budget has room for the
// worst a body of contentLength bytes (≤ 0: unknown) may cost, or ctx
// ends.
func (b *Budget) Reserve(ctx context.Context, contentLength int64) (*Reservation, error) {
	n := b.worst(contentLength)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return &Reservation{b: b, n: n}, nil
}

// Bytes is what the reservation holds.
func (r *Reservation) Bytes() int64 { return r.n }

// Fit lowers the reservation to what body costs; it never raises it.
func (r *Reservation) Fit(body []byte) {
	n := r.b.clamp(Cost(int64(len(body)), int64(jsonlimit.Values(body))))
	if n < r.n {
		r.b.sem.Release(r.n - n)
		r.n = n
	}
}

// Release returns the reservation to the budget; a second call does nothing.
func (r *Reservation) Release() {
	if r.n > 0 {
		r.b.sem.Release(r.n)
		r.n = 0
	}
}

// ReadBody reads a report body from r (already bounded to max bytes, as
// http.MaxBytesReader does) into one buffer of the announced size:
// io.ReadAll's doubling would hold up to twice a 16 MiB body.
func ReadBody(r io.Reader, contentLength, max int64) ([]byte, error) {
	if contentLength <= 0 || contentLength > max {
		return io.ReadAll(r)
	}
	buf := bytes.NewBuffer(make([]byte, 0, contentLength+1))
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}
