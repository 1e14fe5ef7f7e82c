// Package progress tells people what a long command is doing: a step
// starts, moves (bytes done of a total, when known) and ends. A Printer
// writes it for a terminal — one line per step, rewritten in place as it
// moves — or, when the output is a file or a CI log, one line when a step
// starts, a line at each quarter of a transfer, and one when it ends:
// never a carriage return there.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// Func receives a long operation's progress. Done and Total are bytes
// (Total 0 when unknown). A nil Func is valid: Report on it does nothing.
type Func func(e Event)

// Event is one report.
type Event struct {
	// Step says what is being done ("downloading linux-image-6.1.0-57-amd64").
	Step string
	// Done and Total are the bytes done so far and in all (0: unknown).
	Done, Total int64
	// End marks the step finished.
	End bool
}

// Report sends e to f, when there is an f.
func (f Func) Report(e Event) {
	if f != nil {
		f(e)
	}
}

// Printer writes events for people.
type Printer struct {
	w      io.Writer
	prefix string
	tty    bool
	now    func() time.Time

	mu      sync.Mutex
	step    string
	started time.Time
	shown   int  // quarters of the transfer already printed (not a terminal)
	inPlace bool // a line is open on the terminal
}

// NewPrinter writes to w, each line starting with prefix ("ferro lab: ").
// w is a terminal when it is an *os.File on one.
func NewPrinter(w io.Writer, prefix string) *Printer {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	return &Printer{w: w, prefix: prefix, tty: tty, now: time.Now}
}

// Func is the printer as a Func.
func (p *Printer) Func() Func { return p.Report }

// Report prints e.
func (p *Printer) Report(e Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Step != p.step {
		p.closeLine()
		if e.End {
			// Done as soon as said (a cached download): one line.
			fmt.Fprintf(p.w, "%s%s%s\n", p.prefix, e.Step, amount(e))
			p.step = ""
			return
		}
		p.step, p.started, p.shown = e.Step, p.now(), 0
		if !p.tty {
			fmt.Fprintf(p.w, "%s%s…\n", p.prefix, e.Step)
		}
	}
	switch {
	case e.End:
		took := p.now().Sub(p.started).Round(100 * time.Millisecond)
		line := fmt.Sprintf("%s%s: done in %v%s", p.prefix, e.Step, took, amount(e))
		if p.tty {
			fmt.Fprintf(p.w, "\r\033[K%s\n", line)
			p.inPlace = false
		} else {
			fmt.Fprintln(p.w, line)
		}
		p.step = ""
	case p.tty:
		fmt.Fprintf(p.w, "\r\033[K%s%s…%s", p.prefix, e.Step, amount(e))
		p.inPlace = true
	case e.Total > 0:
		// A line at 25, 50 and 75 %: enough to see a download move in a log.
		if q := int(4 * e.Done / e.Total); q > p.shown && q < 4 {
			p.shown = q
			fmt.Fprintf(p.w, "%s%s:%s\n", p.prefix, e.Step, amount(e))
		}
	}
}

// closeLine ends a line left open on the terminal.
func (p *Printer) closeLine() {
	if p.inPlace {
		fmt.Fprintln(p.w)
		p.inPlace = false
	}
}

func amount(e Event) string {
	switch {
	case e.End && e.Done > 0 && (e.Total == 0 || e.Done == e.Total):
		return " (" + mb(e.Done) + ")"
	case e.Total > 0:
		return fmt.Sprintf(" %s of %s (%d%%)", mb(e.Done), mb(e.Total), 100*e.Done/e.Total)
	case e.Done > 0:
		return " " + mb(e.Done)
	}
	return ""
}

func mb(n int64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + " MB" }
