package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/auth"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

func htpasswd(t *testing.T, flag string, users ...string) string {
	return ferrotest.Htpasswd(t, []string{flag}, users...)
}

func basicRequest(user, password string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/v1/nodes", nil)
	r.SetBasicAuth(user, password)
	return r
}

func TestBasic_ApacheHtpasswd(t *testing.T) {
	path := htpasswd(t, "-B", "admin", "s3cret", "ops", "other pass:with colon")
	b, err := auth.NewBasic(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		user, password string
		ok             bool
	}{
		{"admin", "s3cret", true},
		{"admin", "s3cret", true}, // from the cache
		{"ops", "other pass:with colon", true},
		{"admin", "wrong", false},
		{"nobody", "s3cret", false},
		{"admin", "", false},
	} {
		c, err := b.Authenticate(ctx, basicRequest(tc.user, tc.password))
		if tc.ok {
			if err != nil || c.UserName != tc.user || !c.Unrestricted {
				t.Errorf("%s/%s: creds %+v, err %v", tc.user, tc.password, c, err)
			}
			continue
		}
		if !errors.Is(err, auth.ErrUnauthorized) {
			t.Errorf("%s/%s: err = %v, want ErrUnauthorized", tc.user, tc.password, err)
		}
	}

	// A changed file is read on Reload, and the cache is forgotten: the
	// old password stops working at once.
	path2 := htpasswd(t, "-B", "admin", "n3w")
	data, err := os.ReadFile(path2)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := b.Reload(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Authenticate(ctx, basicRequest("admin", "s3cret")); !errors.Is(err, auth.ErrUnauthorized) {
		t.Errorf("old password after reload: err = %v", err)
	}
	if _, err := b.Authenticate(ctx, basicRequest("admin", "n3w")); err != nil {
		t.Errorf("new password after reload: %v", err)
	}
}

func TestBasic_RefusesNonBcryptFiles(t *testing.T) {
	path := htpasswd(t, "-m", "admin", "s3cret") // Apache MD5
	if _, err := auth.NewBasic(path); err == nil || !strings.Contains(err.Error(), "only bcrypt") {
		t.Fatalf("NewBasic(md5 file) err = %v", err)
	}
	if _, err := auth.NewBasic(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("NewBasic(missing file) succeeded")
	}
}

func TestMiddleware_PublicRoutesAndErrors(t *testing.T) {
	b, err := auth.NewBasic(htpasswd(t, "-B", "admin", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	var seen *auth.Credentials
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = auth.FromContext(r.Context())
		w.WriteHeader(http.StatusTeapot)
	})
	h := auth.Middleware(next, auth.Options{Authenticator: b,
		Deny: func(w http.ResponseWriter, _ *http.Request, status int, msg string) {
			http.Error(w, msg, status)
		},
		AdminOnly: func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/v1/introspection") },
	})
	for _, tc := range []struct {
		method, path, authz string
		want                int
	}{
		{"GET", "/", "", http.StatusTeapot},
		{"GET", "/v1", "", http.StatusTeapot},
		{"GET", "/v1/", "", http.StatusTeapot},
		{"POST", "/v1/continue", "", http.StatusTeapot},
		{"GET", "/v1/continue", "", http.StatusUnauthorized},
		{"POST", "/", "", http.StatusUnauthorized},
		{"GET", "/v1/nodes", "", http.StatusUnauthorized},
		{"GET", "//v1", "", http.StatusUnauthorized},
		{"GET", "/v1/nodes", "Bearer x", http.StatusBadRequest},
		{"GET", "/v1/nodes", "Basic !!!", http.StatusBadRequest},
		{"GET", "/v1/nodes", "Basic YWRtaW46d3Jvbmc=", http.StatusUnauthorized}, // admin:wrong
		{"GET", "/v1/nodes", "Basic YWRtaW46czNjcmV0", http.StatusTeapot},       // admin:s3cret
		{"GET", "/v1/introspection", "Basic YWRtaW46czNjcmV0", http.StatusTeapot},
	} {
		seen = nil
		r := httptest.NewRequest(tc.method, "http://x"+tc.path, nil)
		if tc.authz != "" {
			r.Header.Set("Authorization", tc.authz)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s %s (%q): %d, want %d", tc.method, tc.path, tc.authz, w.Code, tc.want)
		}
		if w.Code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") != `Basic realm="Baremetal API"` {
			t.Errorf("%s %s: WWW-Authenticate = %q", tc.method, tc.path, w.Header().Get("WWW-Authenticate"))
		}
		if w.Code == http.StatusTeapot && tc.authz != "" && (seen == nil || seen.UserName != "admin") {
			t.Errorf("%s %s: handler saw credentials %+v", tc.method, tc.path, seen)
		}
	}
}

func FuzzParseBasic(f *testing.F) {
	for _, s := range []string{"", "Basic YWRtaW46czNjcmV0", "basic   YTpi", "Basic", "Basic =", "Bearer x", "Basic YTo=", "Basic \x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		user, password, err := auth.ParseBasic(header)
		if err != nil {
			if !errors.Is(err, auth.ErrUnauthorized) && !errors.Is(err, auth.ErrMalformed) {
				t.Fatalf("ParseBasic(%q): unclassified error %v", header, err)
			}
			if user != "" || password != "" {
				t.Fatalf("ParseBasic(%q) returned credentials with an error", header)
			}
			return
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.SetBasicAuth(user, password)
		u2, p2, err := auth.ParseBasic(r.Header.Get("Authorization"))
		if err != nil || u2 != user || p2 != password {
			t.Fatalf("round trip of %q/%q: %q/%q %v", user, password, u2, p2, err)
		}
	})
}

// TestBasic_UnknownUserCostsWhatAWrongPasswordCosts compares the two
// refusals: an unknown user name must cost the bcrypt work of a known one.
// Each sample is a pair of checks back to back, in alternating order, so
// that a busy machine slows both alike; the median of the pairs' ratios
// must be near 1 (a loose bound: the gap it closes was 32×).
func TestBasic_UnknownUserCostsWhatAWrongPasswordCosts(t *testing.T) {
	path := htpasswd(t, "-B", "admin", "s3cret", "ops", "ops pass")
	b, err := auth.NewBasic(path)
	if err != nil {
		t.Fatal(err)
	}
	check := func(user string) time.Duration {
		start := time.Now()
		if _, err := b.Authenticate(t.Context(), basicRequest(user, "wrong")); !errors.Is(err, auth.ErrUnauthorized) {
			t.Fatalf("%s/wrong: %v", user, err)
		}
		return time.Since(start)
	}
	const pairs = 31
	ratios := make([]float64, pairs)
	var known, unknown time.Duration
	for i := range ratios {
		var k, u time.Duration
		if i%2 == 0 {
			k, u = check("admin"), check("nobody")
		} else {
			u, k = check("nobody"), check("admin")
		}
		known, unknown = known+k, unknown+u
		ratios[i] = float64(u) / float64(k)
	}
	slices.Sort(ratios)
	ratio := ratios[pairs/2]
	t.Logf("mean check: wrong password of a real user %v, unknown user %v; median ratio %.2f",
		known/pairs, unknown/pairs, ratio)
	if ratio < 0.25 || ratio > 4 {
		t.Errorf("an unknown user costs %.2f× a wrong password: the difference names the users", ratio)
	}
}

// TestBasic_FloodOfUnknownUsersCannotStarveALogin: one address floods
// unknown user names; a real user's first login from another address is
// checked after at most a few of the flood's checks, not after all of
// them. Counted in checks, not in time.
func TestBasic_FloodOfUnknownUsersCannotStarveALogin(t *testing.T) {
	// Cost 8: each check takes long enough that the flood is still
	// queued when the login arrives.
	b, err := auth.NewBasic(ferrotest.Htpasswd(t, []string{"-B", "-C", "8"}, "admin", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	const flood = 200
	var mu sync.Mutex
	var checked int // flood requests refused after a check
	var loginAt, loginDone int
	first := make(chan struct{})
	var wg sync.WaitGroup
	for i := range flood {
		wg.Go(func() {
			r := basicRequest(fmt.Sprintf("nobody%d", i), "guess")
			r.RemoteAddr = "192.0.2.1:40000"
			_, err := b.Authenticate(t.Context(), r)
			if !errors.Is(err, auth.ErrUnauthorized) {
				t.Errorf("flood request: %v", err)
				return
			}
			if !strings.Contains(err.Error(), "wrong user or password") {
				return // refused without a check: the address's queue is full
			}
			mu.Lock()
			checked++
			if checked == 1 {
				close(first)
			}
			mu.Unlock()
		})
	}
	<-first
	mu.Lock()
	loginAt = checked
	mu.Unlock()
	r := basicRequest("admin", "s3cret")
	r.RemoteAddr = "198.51.100.7:50000"
	start := time.Now()
	if _, err := b.Authenticate(t.Context(), r); err != nil {
		t.Fatalf("the real login: %v", err)
	}
	took := time.Since(start)
	mu.Lock()
	loginDone = checked
	mu.Unlock()
	wg.Wait()
	ahead := loginDone - loginAt
	t.Logf("flood of %d unknown users: %d checked, %d before the login arrived, %d while it waited (%v), %d after it",
		flood, checked, loginAt, ahead, took.Round(time.Millisecond), checked-loginDone)
	if checked == loginDone {
		t.Fatalf("the login was answered after every one of the flood's %d checks", checked)
	}
	// The checks running when it arrived, the one whose turn came first,
	// and those the other slots finished meanwhile.
	if limit := 2*runtime.GOMAXPROCS(0) + 2; ahead > limit {
		t.Errorf("the login waited for %d of the flood's checks, want at most %d", ahead, limit)
	}
}
