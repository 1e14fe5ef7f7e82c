package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func run(p *Printer) {
	clock := time.Unix(0, 0)
	p.now = func() time.Time { return clock }
	f := p.Func()
	f.Report(Event{Step: "downloading k"})
	for done := int64(0); done <= 100e6; done += 10e6 {
		f.Report(Event{Step: "downloading k", Done: done, Total: 100e6})
	}
	clock = clock.Add(3 * time.Second)
	f.Report(Event{Step: "downloading k", Done: 100e6, Total: 100e6, End: true})
	f.Report(Event{Step: "building the initramfs"})
	f.Report(Event{Step: "building the initramfs", End: true})
	f.Report(Event{Step: "using the cached k", End: true})
}

func TestPrinter_NotATerminal_NoCarriageReturns(t *testing.T) {
	var b bytes.Buffer
	run(NewPrinter(&b, "x: "))
	want := `x: downloading k…
x: downloading k: 30 MB of 100 MB (30%)
x: downloading k: 50 MB of 100 MB (50%)
x: downloading k: 80 MB of 100 MB (80%)
x: downloading k: done in 3s (100 MB)
x: building the initramfs…
x: building the initramfs: done in 0s
x: using the cached k
`
	if b.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestPrinter_TerminalRewritesTheLine(t *testing.T) {
	var b bytes.Buffer
	p := NewPrinter(&b, "x: ")
	p.tty = true
	run(p)
	out := b.String()
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("%d lines on a terminal, want one per step:\n%q", n, out)
	}
	if !strings.Contains(out, "\r\033[Kx: downloading k… 50 MB of 100 MB (50%)") {
		t.Errorf("no in-place progress:\n%q", out)
	}
}

func TestFunc_NilIsQuiet(t *testing.T) {
	var f Func
	f.Report(Event{Step: "x"})
}
