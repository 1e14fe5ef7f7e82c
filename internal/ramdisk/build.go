package ramdisk

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ferrometal/ferro/internal/progress"
)

// Output file names in the output directory.
const (
	KernelFile    = "ferro-agent.kernel"
	InitramfsFile = "ferro-agent.initramfs"
	ISOFile       = "ferro-agent.iso"
)

// BuildOptions are the inputs of Build.
type BuildOptions struct {
	// Kernel is the kernel to boot; nil fetches Debian's (KernelVersion,
	// cached in CacheDir).
	Kernel        *Kernel
	KernelVersion string
	CacheDir      string
	// Agent is a ferro-agent binary; "" builds one from AgentSource.
	Agent       string
	AgentSource string // ferro's module root
	// Modules overrides DefaultModules; ExtraModules adds to them.
	Modules      []string
	ExtraModules []string
	OutDir       string
	// ISO also writes OutDir/ISOFile (BuildISO) booting with ISOCmdline.
	ISO        bool
	ISOCmdline string
	// Progress hears what Build does (fetching, building, writing); nil for
	// silence.
	Progress progress.Func
}

// DefaultISOCmdline is the ISO's kernel command line when none is given:
// the console on screen and on the first serial port. A virtual-media
// driver that knows the callback URL builds its own ISO per node.
const DefaultISOCmdline = "console=tty0 console=ttyS0,115200n8"

// Result says what Build wrote.
type Result struct {
	Kernel, Initramfs string
	ISO               string // "" when not built
	KernelBytes       int64
	ISOBytes          int64
	InitramfsBytes    int64
	AgentBytes        int64
	Modules           []string
}

// Build writes OutDir/KernelFile and OutDir/InitramfsFile. Each file is
// written to a temporary name and renamed, so a half-built ramdisk is never
// served.
func Build(ctx context.Context, o BuildOptions) (*Result, error) {
	if o.OutDir == "" {
		return nil, errors.New("ramdisk: no output directory")
	}
	if err := os.MkdirAll(o.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("ramdisk: %w", err)
	}
	k := o.Kernel
	if k == nil {
		var err error
		if k, err = fetchDebianKernel(ctx, o.CacheDir, o.KernelVersion, o.Progress); err != nil {
			return nil, err
		}
	}
	agent := o.Agent
	if agent == "" {
		tmp, err := os.MkdirTemp("", "ferro-agent-build-")
		if err != nil {
			return nil, fmt.Errorf("ramdisk: %w", err)
		}
		defer os.RemoveAll(tmp)
		agent = filepath.Join(tmp, "ferro-agent")
		step := "building ferro-agent (go build)"
		o.Progress.Report(progress.Event{Step: step})
		if err := BuildAgent(ctx, o.AgentSource, agent); err != nil {
			return nil, err
		}
		o.Progress.Report(progress.Event{Step: step, End: true})
	}
	fi, err := os.Stat(agent)
	if err != nil {
		return nil, fmt.Errorf("ramdisk: agent: %w", err)
	}
	res := &Result{
		Kernel:     filepath.Join(o.OutDir, KernelFile),
		Initramfs:  filepath.Join(o.OutDir, InitramfsFile),
		AgentBytes: fi.Size(),
	}
	iopts := InitramfsOptions{Agent: agent}
	if k.ModulesDir != "" {
		if iopts.Modules, err = OpenModules(k.ModulesDir); err != nil {
			return nil, err
		}
		iopts.ModuleNames = append(append([]string{}, orDefault(o.Modules)...), o.ExtraModules...)
	} else if len(o.Modules)+len(o.ExtraModules) > 0 {
		return nil, errors.New("ramdisk: modules asked for but the kernel's module directory is unknown")
	}
	step := "writing the initramfs (ferro-agent and the kernel modules it needs)"
	o.Progress.Report(progress.Event{Step: step})
	man, err := writeAtomic(res.Initramfs, func(w *os.File) (Manifest, error) { return WriteInitramfs(w, iopts) })
	if err != nil {
		return nil, err
	}
	o.Progress.Report(progress.Event{Step: step, Done: man.Bytes, End: true})
	res.InitramfsBytes, res.Modules = man.Bytes, man.Modules
	if res.KernelBytes, err = copyAtomic(k.Image, res.Kernel); err != nil {
		return nil, err
	}
	if o.ISO {
		res.ISO = filepath.Join(o.OutDir, ISOFile)
		cmdline := o.ISOCmdline
		if cmdline == "" {
			cmdline = DefaultISOCmdline
		}
		o.Progress.Report(progress.Event{Step: "writing the ISO"})
		if err := BuildISO(ctx, res.ISO, ISOOptions{Kernel: res.Kernel, Initramfs: res.Initramfs, Cmdline: cmdline}); err != nil {
			return nil, fmt.Errorf("ramdisk: ISO: %w", err)
		}
		if fi, err := os.Stat(res.ISO); err == nil {
			res.ISOBytes = fi.Size()
		}
		o.Progress.Report(progress.Event{Step: "writing the ISO", Done: res.ISOBytes, End: true})
	}
	return res, nil
}

func orDefault(m []string) []string {
	if m == nil {
		return DefaultModules
	}
	return m
}

func writeAtomic(dst string, write func(*os.File) (Manifest, error)) (Manifest, error) {
	f, err := os.CreateTemp(filepath.Dir(dst), ".tmp-"+filepath.Base(dst))
	if err != nil {
		return Manifest{}, fmt.Errorf("ramdisk: %w", err)
	}
	defer os.Remove(f.Name())
	man, err := write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return Manifest{}, fmt.Errorf("ramdisk: write %s: %w", dst, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return Manifest{}, fmt.Errorf("ramdisk: %w", err)
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		return Manifest{}, fmt.Errorf("ramdisk: %w", err)
	}
	return man, nil
}

func copyAtomic(src, dst string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("ramdisk: kernel: %w", err)
	}
	defer in.Close()
	var n int64
	_, err = writeAtomic(dst, func(f *os.File) (Manifest, error) {
		var err error
		n, err = io.Copy(f, in)
		return Manifest{}, err
	})
	return n, err
}

// ModulePath is ferro's Go module path.
const ModulePath = "github.com/ferrometal/ferro"

// BuildAgent builds cmd/ferro-agent from ferro's source at src into out:
// static, stripped, for linux/amd64.
func BuildAgent(ctx context.Context, src, out string) error {
	if src == "" {
		return errors.New("ramdisk: no ferro-agent binary and no ferro source to build one from (pass --agent, or run from a ferro checkout with Go installed)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("ramdisk: build ferro-agent: the go command is needed (or pass --agent): %w", err)
	}
	cmd := exec.CommandContext(ctx, goTool, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, "./cmd/ferro-agent")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("ramdisk: go build ./cmd/ferro-agent in %s: %w\n%s", src, err, msg)
	}
	return nil
}

// FindSource returns the root of a ferro checkout at or above dir, or "".
func FindSource(dir string) string {
	for {
		if isFerroModule(filepath.Join(dir, "go.mod")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isFerroModule(gomod string) bool {
	f, err := os.Open(gomod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == ModulePath
		}
	}
	return false
}
