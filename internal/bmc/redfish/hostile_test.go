package redfish_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/bmc/redfish"
	"github.com/ferrometal/ferro/internal/bmc/redfish/redfishtest"
	"github.com/ferrometal/ferro/internal/scrub"
)

const hostilePassword = "hostile-pass-W3x9"

func hostPort(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}

// Every place a BMC names — a member link, a redirect, the Sessions
// collection, the session Location, an action target — is followed only on
// the BMC's own origin; the witness, where each attack points, receives
// nothing, neither a request nor the token.
func TestHostile_EverythingStaysOnTheBMC(t *testing.T) {
	for _, tc := range []struct {
		name   string
		attack func(h *redfishtest.Hostile, elsewhere string)
		listed bool // the System is looked up through the Systems collection
		op     string
		ok     bool // the operation succeeds without the attack's link
	}{
		{"member link as userinfo", func(h *redfishtest.Hostile, w string) { h.SystemLink = "@" + hostPort(w) + "/steal" }, true, "system", false},
		{"absolute member link elsewhere", func(h *redfishtest.Hostile, w string) { h.SystemLink = w + "/steal" }, true, "system", false},
		{"scheme change", func(h *redfishtest.Hostile, w string) {
			h.SystemLink = "https://" + hostPort(h.URL) + redfishtest.HostileSystemPath
		}, true, "system", false},
		{"scheme-relative member link", func(h *redfishtest.Hostile, w string) { h.SystemLink = "//" + hostPort(w) + "/steal" }, true, "system", false},
		{"redirect to another port", func(h *redfishtest.Hostile, w string) { h.Redirect = w + "/steal" }, false, "system", false},
		{"Sessions collection elsewhere", func(h *redfishtest.Hostile, w string) { h.SessionsLink = "@" + hostPort(w) + "/v1/nodes" }, false, "system", false},
		{"reset target as userinfo", func(h *redfishtest.Hostile, w string) {
			h.ResetTarget = "@" + hostPort(w) + "/v1/nodes/victim"
		}, false, "reset", false},
		{"session Location as userinfo", func(h *redfishtest.Hostile, w string) {
			h.SessionLocation = "@" + hostPort(w) + "/v1/nodes/victim"
		}, false, "logout", true},
		{"session Location elsewhere", func(h *redfishtest.Hostile, w string) { h.SessionLocation = w + "/v1/nodes/victim" }, false, "logout", true},
		{"absolute links on the origin are fine", func(h *redfishtest.Hostile, w string) {
			h.SystemLink = h.URL + redfishtest.HostileSystemPath
			h.SessionLocation = h.URL + "/redfish/v1/SessionService/Sessions/1"
		}, true, "logout", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := redfishtest.NewHostile(t)
			w := redfishtest.NewWitness(t)
			h.Set(func(h *redfishtest.Hostile) { tc.attack(h, w.URL) })
			c, _ := client(t, 2)
			ep := redfish.Endpoint{Address: h.URL, Username: redfishtest.User, Password: hostilePassword, AuthType: redfish.AuthSession}
			if !tc.listed {
				ep.SystemID = redfishtest.HostileSystemPath
			}
			ctx := context.Background()
			var err error
			switch tc.op {
			case "system", "logout":
				_, err = c.System(ctx, ep)
				if tc.op == "logout" {
					c.Close()
				}
			case "reset":
				err = c.Reset(ctx, ep, "On")
			}
			if tc.ok && err != nil {
				t.Errorf("%s: %v", tc.op, err)
			}
			if !tc.ok && !errors.Is(err, redfish.ErrOffOrigin) {
				t.Errorf("%s: %v, want ErrOffOrigin", tc.op, err)
			}
			if hits := w.Hits(); len(hits) > 0 {
				t.Errorf("the witness received %v", hits)
			}
			if err != nil && strings.Contains(err.Error(), hostilePassword) {
				t.Errorf("the error has the password: %v", err)
			}
		})
	}
}

// A BMC that quotes the credentials it received, in every encoding a body
// has them (JSON, an Authorization header), does not get them into ferro's
// errors or logs; its message is quoted once and shortened.
func TestHostile_EchoedCredentialsAreScrubbed(t *testing.T) {
	for _, auth := range []string{redfish.AuthBasic, redfish.AuthSession} {
		t.Run(auth, func(t *testing.T) {
			h := redfishtest.NewHostile(t)
			h.Set(func(h *redfishtest.Hostile) { h.EchoCredentials, h.FailSystem = true, true })
			c, log := client(t, 2)
			const other = "ferro-own-secret-5521"
			c2 := redfish.New(redfish.Options{ConnectionAttempts: 2, Secrets: scrub.New(other)})
			t.Cleanup(c2.Close)
			ep := redfish.Endpoint{Address: h.URL, Username: redfishtest.User, Password: hostilePassword + `"<&>`, AuthType: auth,
				SystemID: redfishtest.HostileSystemPath, Secrets: []string{"node-other-secret-77"}}
			_, err := c.System(context.Background(), ep)
			if err == nil {
				t.Fatal("no error from a failing System")
			}
			text := err.Error() + "\n" + log.String()
			for _, leak := range []string{hostilePassword, base64.StdEncoding.EncodeToString([]byte(redfishtest.User + ":" + ep.Password)),
				redfishtest.HostileToken} {
				if strings.Contains(text, leak) {
					t.Errorf("%q leaked into %s", leak, text)
				}
			}
			if !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "***") {
				t.Errorf("error %q does not quote the BMC's message, scrubbed", err)
			}
			if strings.Contains(err.Error(), `\"`) || strings.Count(err.Error(), "session") > 1 || len(err.Error()) > 400 {
				t.Errorf("error %q is not the BMC's message once, shortened", err)
			}
		})
	}
}

// A body that never ends is cut at the bound: the client fails, having
// read a few MiB, not what the BMC would send.
func TestHostile_EndlessBodyIsCut(t *testing.T) {
	for _, asError := range []bool{false, true} {
		testEndlessBody(t, asError)
	}
}

func testEndlessBody(t *testing.T, asError bool) {
	h := redfishtest.NewHostile(t)
	h.Set(func(h *redfishtest.Hostile) { h.EndlessSystem, h.EndlessError = !asError, asError })
	c, _ := client(t, 1)
	ep := redfish.Endpoint{Address: h.URL, Username: redfishtest.User, Password: hostilePassword, AuthType: redfish.AuthBasic,
		SystemID: redfishtest.HostileSystemPath}
	_, err := c.System(context.Background(), ep)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err %v, want the body bound", err)
	}
	var sent int64
	h.Set(func(h *redfishtest.Hostile) { sent = h.EndlessSent })
	if sent >= 1<<30 {
		t.Errorf("the client read the whole GiB")
	}
}
