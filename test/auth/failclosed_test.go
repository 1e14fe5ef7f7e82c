package auth_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// serveFails runs ferro serve with conf and env and expects it to refuse
// to start, saying want.
func serveFails(t *testing.T, conf string, env []string, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	args := []string{"serve", "--data-dir", t.TempDir()}
	if conf != "" {
		args = append(args, "--config", writeConfig(t, conf))
	}
	cmd := exec.CommandContext(ctx, ferrotest.Binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "FERRO_API_PORT=" + itoa(ferrotest.FreePort(t)),
		"FERRO_INSPECTOR_LISTEN_PORT=" + itoa(ferrotest.FreePort(t))}, env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("ferro serve kept running; want it to refuse to start with %q\n%s", want, out.String())
	}
	if err == nil || !strings.Contains(out.String(), want) {
		t.Errorf("ferro serve: %v; want a refusal saying %q:\n%s", err, want, out.String())
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestServe_FailsClosed(t *testing.T) {
	t.Run("noauth on every address", func(t *testing.T) {
		serveFails(t, "", []string{"FERRO_API_HOST_IP=0.0.0.0"}, "refusing to serve without authentication on 0.0.0.0")
	})
	t.Run("noauth on the inspector's address", func(t *testing.T) {
		serveFails(t, "", []string{"FERRO_INSPECTOR_LISTEN_ADDRESS=0.0.0.0"}, "allow_insecure_noauth")
	})
	t.Run("unknown strategy", func(t *testing.T) {
		serveFails(t, "[DEFAULT]\nauth_strategy = keystone_v2\n", nil, `auth_strategy "keystone_v2"`)
	})
	t.Run("keystone without its section", func(t *testing.T) {
		serveFails(t, "[DEFAULT]\nauth_strategy = keystone\n", nil, "needs [keystone_authtoken]auth_url")
	})
	t.Run("http_basic without the user file", func(t *testing.T) {
		serveFails(t, "[DEFAULT]\nauth_strategy = http_basic\nhttp_basic_auth_user_file = /nonexistent/htpasswd\n", nil, "http_basic_auth_user_file")
	})
	t.Run("TLS client certificates ferro does not check", func(t *testing.T) {
		serveFails(t, "[ssl]\nca_file = /etc/ssl/ca.pem\n", nil, "[ssl]ca_file")
	})
	t.Run("TLS without a certificate", func(t *testing.T) {
		serveFails(t, "[api]\nenable_ssl_api = true\n", nil, "needs [ssl]cert_file")
	})
	t.Run("noauth opened on purpose", func(t *testing.T) {
		srv := ferrotest.Start(t, ferrotest.WithEnv("FERRO_API_HOST_IP=0.0.0.0", "FERRO_API_ALLOW_INSECURE_NOAUTH=true"))
		if !strings.Contains(srv.Log(), "auth_strategy=noauth") {
			t.Errorf("the strategy in force is not logged:\n%s", srv.Log())
		}
	})
}
