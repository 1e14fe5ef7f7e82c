// Package lab is the built-in netboot's test bed shared by bench/netboot
// and bench/scale: two network namespaces joined by a veth pair (ferro
// serve on a bridge in one, the simulated machines in the other), nodes
// in inspect wait with the ipxe boot interface's files laid out, ferro
// serve started on them with [dhcp]dhcp_provider=builtin, and a TFTP
// client. It needs root.
package lab

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/driver/deployimage"
	"github.com/ferrometal/ferro/internal/driver/fake"
	"github.com/ferrometal/ferro/internal/driver/pxe"
	"github.com/ferrometal/ferro/internal/netns"
	"github.com/ferrometal/ferro/internal/states"
	sqlstore "github.com/ferrometal/ferro/internal/store/sql"
)

// ServerIP is ferro's address on the bridge; ClientIP the machines' side
// of the veth pair.
const ServerIP, ClientIP = "192.168.78.1", "192.168.78.2"

// Lab is the two namespaces: Server holds the bridge br0 (ferro serve
// binds there), Client the veth end v1 the machines send from.
type Lab struct {
	Server, Client NS
}

// Setup creates the namespaces and their links; Close removes them.
func Setup() (*Lab, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("needs root for network namespaces")
	}
	n := NS("ferro-bench-" + strings.ToLower(rand.Text()[:6]))
	if out, err := exec.Command("ip", "netns", "add", string(n)).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ip netns add: %v: %s", err, out)
	}
	l := &Lab{Server: n}
	// The clients live in a namespace of their own, at the other end of
	// the veth pair: their packets cross it as a machine's would.
	cl := NS(string(n) + "-c")
	if out, err := exec.Command("ip", "netns", "add", string(cl)).CombinedOutput(); err != nil {
		l.Close()
		return nil, fmt.Errorf("ip netns add: %v: %s", err, out)
	}
	l.Client = cl
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"link", "add", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0"},
		{"addr", "add", ServerIP + "/24", "dev", "br0"},
		{"link", "set", "br0", "up"},
		{"link", "add", "v0", "type", "veth", "peer", "name", "v1"},
		{"link", "set", "v0", "master", "br0"},
		{"link", "set", "v0", "up"},
		{"link", "set", "v1", "netns", string(cl)},
	} {
		if err := n.IP(args...); err != nil {
			l.Close()
			return nil, err
		}
	}
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"addr", "add", ClientIP + "/24", "dev", "v1"},
		{"link", "set", "v1", "up"},
	} {
		if err := cl.IP(args...); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// Close removes the namespaces.
func (l *Lab) Close() {
	for _, n := range []NS{l.Client, l.Server} {
		if n != "" {
			exec.Command("ip", "netns", "del", string(n)).Run()
		}
	}
}

// NS is a network namespace.
type NS string

// IP runs ip -n NS args.
func (n NS) IP(args ...string) error {
	out, err := exec.Command("ip", append([]string{"-n", string(n)}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// Do runs fn on a thread inside the namespace.
func (n NS) Do(fn func() error) error { return netns.Do(netns.Path(string(n)), fn) }

// PrepareNodes writes the database and boot roots ferro will start on: N
// nodes in inspect wait with one port each and their ipxe boot files.
func PrepareNodes(dir string, clients, kernelMB int) (macs []net.HardwareAddr, uuids []string, err error) {
	ctx := context.Background()
	images := filepath.Join(dir, "images")
	os.MkdirAll(images, 0o755)
	kernel := make([]byte, kernelMB<<20)
	rand.Read(kernel)
	if err := os.WriteFile(filepath.Join(images, "kernel"), kernel, 0o644); err != nil {
		return nil, nil, err
	}
	os.WriteFile(filepath.Join(images, "ramdisk"), []byte("ramdisk"), 0o644)
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(dir, "data", "ferro.db"))
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	// [pxe]'s defaults, with the bench's roots and images.
	boot, err := pxe.New(pxe.IPXE, pxe.Options{Images: deployimage.New(deployimage.Options{AllowedPaths: []string{images}}),
		TFTPRoot: filepath.Join(dir, "tftpboot"), HTTPRoot: filepath.Join(dir, "httpboot"),
		HTTPURL:     "http://" + ServerIP + ":6385/httpboot",
		PXEBootfile: "pxelinux.0", IPXEBootfile: "undionly.kpxe", KernelAppendParams: "nofb nomodeset vga=normal"})
	if err != nil {
		return nil, nil, err
	}
	quiet := slog.New(slog.DiscardHandler)
	for i := range clients {
		mac := net.HardwareAddr{0x52, 0x54, 0x00, 0x78, byte(i >> 8), byte(i)}
		node := &baremetal.Node{UUID: uuid.NewString(), Name: fmt.Sprintf("bench-%d", i), Driver: "fake-hardware",
			ProvisionState: states.InspectWait, PowerState: baremetal.PowerOn,
			Interfaces: map[string]string{"boot": "ipxe", "power": "fake", "management": "fake", "network": "noop", "inspect": "inspector"},
			DriverInfo: baremetal.JSON{"deploy_kernel": "file://" + filepath.Join(images, "kernel"),
				"deploy_ramdisk": "file://" + filepath.Join(images, "ramdisk")},
			DriverInternalInfo: baremetal.JSON{"inspector_manage_boot": true}, InstanceInfo: baremetal.JSON{}}
		if err := db.CreateNode(ctx, node); err != nil {
			return nil, nil, err
		}
		port := &baremetal.Port{UUID: uuid.NewString(), NodeUUID: node.UUID, Address: mac.String(), PXEEnabled: true}
		if err := db.CreatePort(ctx, port); err != nil {
			return nil, nil, err
		}
		task := &driver.Task{Node: node, Ports: []*baremetal.Port{port}, Driver: &driver.Interfaces{Management: fake.Management{}}, Log: quiet}
		if err := boot.PrepareRamdisk(ctx, task, nil); err != nil {
			return nil, nil, err
		}
		macs = append(macs, mac)
		uuids = append(uuids, node.UUID)
	}
	return macs, uuids, nil
}

// Server is a ferro serve in the server namespace.
type Server struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// PID is the process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// StartFerro starts ferro serve in n on dir's database and boot roots
// (PrepareNodes), with the built-in netboot on br0 and env after the
// defaults, and returns once it has started.
func StartFerro(n NS, bin, dir string, env ...string) (*Server, error) {
	s := &Server{log: filepath.Join(dir, "ferro.log"), exited: make(chan struct{})}
	logf, err := os.Create(s.log)
	if err != nil {
		return nil, err
	}
	env = append([]string{
		"FERRO_API_HOST_IP=" + ServerIP, "FERRO_API_PORT=6385", "FERRO_API_ALLOW_INSECURE_NOAUTH=true",
		"FERRO_INSPECTOR_LISTEN_ADDRESS=" + ServerIP,
		"FERRO_PXE_TFTP_ROOT=" + filepath.Join(dir, "tftpboot"),
		"FERRO_DEPLOY_HTTP_ROOT=" + filepath.Join(dir, "httpboot"),
		"FERRO_DEPLOY_HTTP_URL=http://" + ServerIP + ":6385/httpboot",
		"FERRO_DHCP_DHCP_PROVIDER=builtin",
		"FERRO_NETBOOT_INTERFACE=br0", "FERRO_NETBOOT_LISTEN_ADDRESS=" + ServerIP,
		"FERRO_NETBOOT_RANGE_START=192.168.78.10", "FERRO_NETBOOT_RANGE_END=192.168.78.250",
		"FERRO_NETBOOT_NETMASK=255.255.255.0",
		"FERRO_NETBOOT_TFTP_MAX_TRANSFERS=256",
		// Every simulated client sends from the same address.
		"FERRO_NETBOOT_TFTP_MAX_TRANSFERS_PER_CLIENT=256", "FERRO_NETBOOT_TFTP_CLIENT_REQUEST_RATE=1000",
		"FERRO_DEFAULT_DEBUG=" + os.Getenv("BENCH_DEBUG"),
	}, env...)
	s.cmd = exec.Command("ip", "netns", "exec", string(n), bin, "serve", "--data-dir", filepath.Join(dir, "data"))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FERRO_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); logf.Close(); close(s.exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(s.log)
		if strings.Contains(string(b), "ferro started") {
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("ferro serve exited while starting\n%s", s.LogTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("ferro serve did not start in 30 s\n%s", s.LogTail())
		}
	}
}

// Stop stops it (SIGTERM, then SIGKILL after 15 s).
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// LogTail is the end of its log.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(s.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// RSSMB reads a Vm* line of /proc/PID/status in MB.
func RSSMB(pid int, field string) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.Fields(v)[0])
			return float64(kb) / 1024
		}
	}
	return 0
}

// FerroBinary is given as an absolute path, else ./cmd/ferro built into dir.
func FerroBinary(given, dir string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	out := filepath.Join(dir, "ferro")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "./cmd/ferro")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ferro: %w\n%s", err, msg)
	}
	return out, nil
}

// CPUSeconds is a process's user and system CPU seconds, from /proc.
func CPUSeconds(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}
