package pxe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

func TestValidateInspection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kinds []Kind // nil: both
		setup func(e *env, task *driver.Task)
		want  error  // nil, ErrUnsupported or ErrInvalidParameter
		msg   string // part of the message
	}{
		{name: "valid driver_info", setup: func(*env, *driver.Task) {}},
		{name: "conductor defaults when driver_info has neither", setup: func(e *env, task *driver.Task) {
			e.img.DefaultKernel, e.img.DefaultRamdisk = e.kernelURL, e.ramdiskURL
			clearImages(task)
		}},
		{name: "empty strings count as absent", setup: func(e *env, task *driver.Task) {
			e.img.DefaultKernel, e.img.DefaultRamdisk = e.kernelURL, e.ramdiskURL
			task.Node.DriverInfo["deploy_kernel"], task.Node.DriverInfo["deploy_ramdisk"] = "", nil
		}},
		{name: "http and https images", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "http://images.example.com/ipa.kernel"
			task.Node.DriverInfo["deploy_ramdisk"] = "https://user:secret@images.example.com/ipa.initramfs?x=1"
		}},
		{name: "file://localhost", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "file://localhost" + filepath.Join(e.images, "ipa.kernel")
		}},
		{name: "allow list entry with trailing slash", setup: func(e *env, task *driver.Task) {
			e.img.AllowedPaths = []string{e.images + "/"}
		}},
		{name: "allow list /", setup: func(e *env, task *driver.Task) {
			e.img.AllowedPaths = []string{"/"}
		}},

		// Missing: fall back.
		{name: "no ports", want: driver.ErrUnsupported, msg: "no ports", setup: func(e *env, task *driver.Task) {
			task.Ports = nil
		}},
		{name: "no PXE-enabled port", want: driver.ErrUnsupported, msg: "PXE-enabled", setup: func(e *env, task *driver.Task) {
			for _, p := range task.Ports {
				p.PXEEnabled = false
			}
		}},
		{name: "no images anywhere", want: driver.ErrUnsupported, msg: "deploy_kernel", setup: func(e *env, task *driver.Task) {
			clearImages(task)
		}},
		{name: "no tftp_root", kinds: []Kind{PXE}, want: driver.ErrUnsupported, msg: "[pxe]tftp_root", setup: func(e *env, task *driver.Task) {
			e.opts.TFTPRoot = ""
		}},
		{name: "no http_url", kinds: []Kind{IPXE}, want: driver.ErrUnsupported, msg: "[deploy]http_url", setup: func(e *env, task *driver.Task) {
			e.opts.HTTPURL = ""
		}},
		{name: "no http_root", kinds: []Kind{IPXE}, want: driver.ErrUnsupported, msg: "[deploy]http_root", setup: func(e *env, task *driver.Task) {
			e.opts.HTTPRoot = ""
		}},
		{name: "pxe needs no http", kinds: []Kind{PXE}, setup: func(e *env, task *driver.Task) {
			e.opts.HTTPURL, e.opts.HTTPRoot = "", ""
		}},
		{name: "ipxe needs no tftp_root", kinds: []Kind{IPXE}, setup: func(e *env, task *driver.Task) {
			e.opts.TFTPRoot = ""
		}},

		// Invalid: fail.
		{name: "driver_info kernel without ramdisk", want: driver.ErrInvalidParameter, msg: "set both or neither", setup: func(e *env, task *driver.Task) {
			e.img.DefaultKernel, e.img.DefaultRamdisk = e.kernelURL, e.ramdiskURL
			delete(task.Node.DriverInfo, "deploy_ramdisk")
		}},
		{name: "driver_info ramdisk without kernel", want: driver.ErrInvalidParameter, msg: "driver_info[deploy_ramdisk] is set but driver_info[deploy_kernel] is not", setup: func(e *env, task *driver.Task) {
			delete(task.Node.DriverInfo, "deploy_kernel")
		}},
		{name: "conductor kernel without ramdisk", want: driver.ErrInvalidParameter, msg: "[conductor]deploy_kernel is set", setup: func(e *env, task *driver.Task) {
			e.img.DefaultKernel = e.kernelURL
			clearImages(task)
		}},
		{name: "deploy_kernel not a string", want: driver.ErrInvalidParameter, msg: "must be a string", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = 42.0
		}},
		{name: "ftp scheme", want: driver.ErrInvalidParameter, msg: "only http, https and file", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "ftp://images/ipa.kernel"
		}},
		{name: "glance reference", want: driver.ErrInvalidParameter, msg: "image service", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "0c8b3f5e-2f1d-4c9e-9f7b-1d2e3f4a5b6c"
		}},
		{name: "bare path", want: driver.ErrInvalidParameter, msg: "file:///absolute/path", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = filepath.Join(e.images, "ipa.kernel")
		}},
		{name: "relative file URL", want: driver.ErrInvalidParameter, msg: "not an absolute file URL", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "file://images/ipa.kernel"
		}},
		{name: "opaque file URL", want: driver.ErrInvalidParameter, msg: "not an absolute file URL", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "file:ipa.kernel"
		}},
		{name: "http without host", want: driver.ErrInvalidParameter, msg: "no host", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "http:///ipa.kernel"
		}},
		{name: "space in URL", want: driver.ErrInvalidParameter, msg: "whitespace", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_ramdisk"] = "http://images/ipa initramfs"
		}},
		{name: "file outside the allow list", want: driver.ErrInvalidParameter, msg: "file_url_allowed_paths", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "file:///var/tmp/ipa.kernel"
		}},
		{name: "allow list prefix is not a parent", want: driver.ErrInvalidParameter, msg: "file_url_allowed_paths", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "file://" + e.images + "-other/ipa.kernel"
		}},
		{name: "dot-dot out of the allow list", want: driver.ErrInvalidParameter, msg: "file_url_allowed_paths", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["deploy_kernel"] = "file://" + e.images + "/../../ipa.kernel"
		}},
		{name: "file URLs disabled", want: driver.ErrInvalidParameter, msg: "disabled", setup: func(e *env, task *driver.Task) {
			e.img.AllowedPaths = nil
		}},
		{name: "relative allow list entries ignored", want: driver.ErrInvalidParameter, msg: "disabled", setup: func(e *env, task *driver.Task) {
			e.img.AllowedPaths = []string{"images"}
		}},
		{name: "kernel_append_params with dollar", want: driver.ErrInvalidParameter, msg: "driver_info[kernel_append_params]", setup: func(e *env, task *driver.Task) {
			task.Node.DriverInfo["kernel_append_params"] = "a=${mac}"
		}},
		{name: "config kernel_append_params with quote", want: driver.ErrInvalidParameter, msg: "[pxe]kernel_append_params", setup: func(e *env, task *driver.Task) {
			e.opts.KernelAppendParams = `console="ttyS0"`
		}},
		{name: "bad MAC", want: driver.ErrInvalidParameter, msg: "MAC", setup: func(e *env, task *driver.Task) {
			task.Ports[0].Address = "52:54:00:12:34"
		}},
		{name: "node UUID is a path", want: driver.ErrInvalidParameter, msg: "not a UUID", setup: func(e *env, task *driver.Task) {
			task.Node.UUID = "../../etc"
		}},
		{name: "relative tftp_root", kinds: []Kind{PXE}, want: driver.ErrInvalidParameter, msg: "absolute", setup: func(e *env, task *driver.Task) {
			e.opts.TFTPRoot = "tftpboot"
		}},
		{name: "relative http_root", kinds: []Kind{IPXE}, want: driver.ErrInvalidParameter, msg: "absolute", setup: func(e *env, task *driver.Task) {
			e.opts.HTTPRoot = "html"
		}},
		{name: "http_url not http", kinds: []Kind{IPXE}, want: driver.ErrInvalidParameter, msg: "http:// or https://", setup: func(e *env, task *driver.Task) {
			e.opts.HTTPURL = "tftp://10.0.0.1/"
		}},
		{name: "http_url with space", kinds: []Kind{IPXE}, want: driver.ErrInvalidParameter, msg: "[deploy]http_url", setup: func(e *env, task *driver.Task) {
			e.opts.HTTPURL = "http://10.0.0.1/ x"
		}},
		{name: "http_url with iPXE variable", kinds: []Kind{IPXE}, want: driver.ErrInvalidParameter, msg: "[deploy]http_url", setup: func(e *env, task *driver.Task) {
			e.opts.HTTPURL = "http://${next-server}/"
		}},
		{name: "tftp_server with newline", want: driver.ErrInvalidParameter, msg: "[pxe]tftp_server", setup: func(e *env, task *driver.Task) {
			e.opts.TFTPServer = "10.0.0.1\ndhcp-option=3,6.6.6.6"
		}},
		{name: "invalid wins over missing", want: driver.ErrInvalidParameter, msg: "ftp", setup: func(e *env, task *driver.Task) {
			task.Ports = nil
			task.Node.DriverInfo["deploy_kernel"] = "ftp://images/ipa.kernel"
		}},
	} {
		kinds := tc.kinds
		if kinds == nil {
			kinds = []Kind{PXE, IPXE}
		}
		for _, kind := range kinds {
			t.Run(string(kind)+"/"+tc.name, func(t *testing.T) {
				e := newEnv(t)
				task := e.task()
				tc.setup(e, task)
				err := e.boot(t, kind).ValidateInspection(context.Background(), task)
				if tc.want == nil {
					if err != nil {
						t.Fatalf("err = %v, want nil", err)
					}
					return
				}
				if !errors.Is(err, tc.want) {
					t.Fatalf("err = %v, want %v", err, tc.want)
				}
				if errors.Is(err, driver.ErrUnsupported) && errors.Is(err, driver.ErrInvalidParameter) {
					t.Errorf("err = %v is both unsupported and invalid", err)
				}
				if !strings.Contains(err.Error(), tc.msg) {
					t.Errorf("err = %v, want it to mention %q", err, tc.msg)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("err = %v shows a password", err)
				}
			})
		}
	}
}

func clearImages(task *driver.Task) {
	delete(task.Node.DriverInfo, "deploy_kernel")
	delete(task.Node.DriverInfo, "deploy_ramdisk")
}

func TestValidate_MissingIsMissingParameter(t *testing.T) {
	e := newEnv(t)
	task := e.task()
	task.Ports = nil
	err := e.boot(t, PXE).Validate(context.Background(), task)
	if !errors.Is(err, driver.ErrMissingParameter) || errors.Is(err, driver.ErrUnsupported) {
		t.Errorf("err = %v, want ErrMissingParameter only", err)
	}
	if err := e.boot(t, PXE).Validate(context.Background(), e.task()); err != nil {
		t.Errorf("valid node: %v", err)
	}
}

func TestPrepareRamdisk_FileURLSymlinkEscapesAreRejected(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(t *testing.T) string
	}{
		{"into the deny list", func(*testing.T) string { return "/etc/hostname" }},
		{"outside the allow list", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "secret")
			writeFile(t, p, "SECRET")
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			link := filepath.Join(e.images, "escape")
			if err := os.Symlink(tc.target(t), link); err != nil {
				t.Fatal(err)
			}
			task := e.task()
			task.Node.DriverInfo["deploy_kernel"] = "file://" + link
			err := e.boot(t, PXE).PrepareRamdisk(context.Background(), task, nil)
			if !errors.Is(err, driver.ErrInvalidParameter) {
				t.Fatalf("err = %v, want ErrInvalidParameter", err)
			}
			if exists(filepath.Join(e.tftp, nodeUUID, "deploy_kernel")) {
				t.Error("the escaped file was linked")
			}
		})
	}
}

func TestPrepareRamdisk_AllowedDirectoryMayBeASymlink(t *testing.T) {
	e := newEnv(t)
	alias := filepath.Join(t.TempDir(), "ironic")
	if err := os.Symlink(e.images, alias); err != nil {
		t.Fatal(err)
	}
	e.img.AllowedPaths = []string{alias}
	task := e.task()
	task.Node.DriverInfo["deploy_kernel"] = "file://" + filepath.Join(alias, "ipa.kernel")
	task.Node.DriverInfo["deploy_ramdisk"] = "file://" + filepath.Join(alias, "ipa.initramfs")
	if err := e.boot(t, PXE).PrepareRamdisk(context.Background(), task, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPrepareRamdisk_FileImageMustBeANonEmptyRegularFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, e *env) string
	}{
		{"missing", func(t *testing.T, e *env) string { return filepath.Join(e.images, "nope") }},
		{"directory", func(t *testing.T, e *env) string { return e.images }},
		{"empty", func(t *testing.T, e *env) string {
			p := filepath.Join(e.images, "empty")
			writeFile(t, p, "")
			return p
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			task := e.task()
			task.Node.DriverInfo["deploy_ramdisk"] = "file://" + tc.setup(t, e)
			if err := e.boot(t, PXE).PrepareRamdisk(context.Background(), task, nil); err == nil {
				t.Fatal("prepared with a bad ramdisk file")
			}
			if len(e.mgmt.calls) != 0 {
				t.Error("boot device set although the ramdisk could not be cached")
			}
		})
	}
}

func TestPrepareRamdisk_FileImageIsHardLinked(t *testing.T) {
	e := newEnv(t)
	if err := e.boot(t, PXE).PrepareRamdisk(context.Background(), e.task(), nil); err != nil {
		t.Fatal(err)
	}
	src, _ := os.Stat(filepath.Join(e.images, "ipa.kernel"))
	dst, _ := os.Stat(filepath.Join(e.tftp, nodeUUID, "deploy_kernel"))
	if !os.SameFile(src, dst) {
		t.Error("deploy_kernel is not a hard link to the source (same file system)")
	}
	// Clean up must not touch the source.
	if err := e.boot(t, PXE).CleanUpRamdisk(context.Background(), e.task()); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(e.images, "ipa.kernel")); got != "KERNEL" {
		t.Errorf("source changed: %q", got)
	}
}

func TestValidateInspection_IgnoresNonPXEPortsBadMAC(t *testing.T) {
	e := newEnv(t)
	task := e.task()
	task.Ports = append(task.Ports, &baremetal.Port{UUID: "ib", Address: "80:00:02:08:fe:80:00:00:00:00:00:00:f4:52:14:03:00:8a:bd:51", PXEEnabled: false})
	if err := e.boot(t, PXE).ValidateInspection(context.Background(), task); err != nil {
		t.Errorf("a non-PXE InfiniBand port must not fail validation: %v", err)
	}
}
