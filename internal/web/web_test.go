package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ferrometal/ferro/internal/baremetal"
	"github.com/ferrometal/ferro/internal/driver"
)

func TestTimeline_PhasesOfTheLastInspectionWithTheirDurations(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	end := at(30)
	n := &baremetal.Node{InspectionStartedAt: &start, InspectionFinishedAt: &end, ProvisionState: "manageable"}
	events := []*baremetal.HistoryEvent{
		{EventType: driver.ProgressEventType, Event: "powered on", CreatedAt: at(-100)}, // an earlier inspection
		{EventType: driver.ProgressEventType, Event: "powered on: ramdisk for ferro-agent", CreatedAt: at(2)},
		{EventType: "provisioning", Event: "something else", CreatedAt: at(3)},
		{EventType: driver.ProgressEventType, Event: "report received", CreatedAt: at(20)},
	}
	got := timeline(n, events)
	want := []phase{
		{Name: "started", At: start},
		{Name: "powered on", Detail: "ramdisk for ferro-agent", At: at(2), Took: 2 * time.Second},
		{Name: "report received", At: at(20), Took: 18 * time.Second},
		{Name: "finished", At: end, Took: 10 * time.Second},
	}
	if len(got) != len(want) {
		t.Fatalf("timeline = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("phase %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if timeline(&baremetal.Node{}, events) != nil {
		t.Error("a node never inspected has a timeline")
	}
}

func TestNaturalCompare(t *testing.T) {
	if naturalCompare("swp2", "swp10") >= 0 || naturalCompare("Eth1/10", "Eth1/9") <= 0 || naturalCompare("a", "b") >= 0 {
		t.Error("ports are not in natural order")
	}
}

// TestLogin_KeepsTheTokenInAStrictCookieTheViewAloneReads: the sign-in
// form sets the cookie, and KeystoneCookie turns it into X-Auth-Token.
func TestLogin_KeepsTheTokenInAStrictCookieTheViewAloneReads(t *testing.T) {
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader(url.Values{"token": {"gAAAAABtoken"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	v.Login().ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/ui/" {
		t.Fatalf("sign in: %d %v", rec.Code, rec.Header())
	}
	c := rec.Result().Cookies()
	if len(c) != 1 || c[0].Name != TokenCookie || c[0].Value != "gAAAAABtoken" || !c[0].HttpOnly ||
		c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/ui/" {
		t.Fatalf("cookie = %+v", c)
	}
	var seen string
	h := KeystoneCookie(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Get("X-Auth-Token") }))
	page := httptest.NewRequest(http.MethodGet, "/ui/", nil)
	page.AddCookie(c[0])
	h.ServeHTTP(httptest.NewRecorder(), page)
	if seen != "gAAAAABtoken" {
		t.Errorf("X-Auth-Token under the view = %q", seen)
	}
	// A token with a space or a newline is no token.
	rec = httptest.NewRecorder()
	req = httptest.NewRequest(http.MethodPost, "/ui/login", strings.NewReader("token=a+b"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	v.Login().ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || len(rec.Result().Cookies()) != 0 {
		t.Errorf("a bad token: %d, cookies %v", rec.Code, rec.Result().Cookies())
	}
}
