package scrub

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

func TestText_RemovesEchoedForms(t *testing.T) {
	const user, pass = "admin", `pä"ss/wörd<1>`
	s := New("tok-12345").WithBasic(user, pass)
	goJSON, _ := json.Marshal(map[string]string{"Password": pass})
	twice, _ := json.Marshal(string(goJSON))
	for _, echo := range []string{
		pass,
		string(goJSON),
		string(twice),
		`{"Password": "p\u00e4\"ss/w\u00f6rd<1>"}`, // Python's json.dumps
		`{"Password": "pä\"ss\/wörd<1>"}`,          // an encoder that escapes /
		"Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)),
		"X-Auth-Token: tok-12345",
		"/login?password=p%C3%A4%22ss%2Fw%C3%B6rd%3C1%3E",
	} {
		got := s.Text("BMC said: " + echo)
		for _, leak := range []string{pass, `p\"ss`, `p\u00e4`, `ss\/w`, "tok-12345", base64.StdEncoding.EncodeToString([]byte(user + ":" + pass)), "w%C3%B6rd"} {
			if strings.Contains(got, leak) {
				t.Errorf("%q scrubbed to %q: still has %q", echo, got, leak)
			}
		}
		if !strings.Contains(got, Mask) {
			t.Errorf("%q scrubbed to %q: no mask", echo, got)
		}
	}
}

func TestText_LongestFirstAndZeroValue(t *testing.T) {
	s := Join(New("secret"), New("secretpassword"))
	if got := s.Text("x secretpassword y secret"); got != "x *** y ***" {
		t.Errorf("got %q", got)
	}
	var zero Secrets
	if got := zero.Text("secret"); got != "secret" || !zero.Empty() {
		t.Errorf("zero value changed the text: %q", got)
	}
	if New("").Empty() != true {
		t.Error("an empty value is a secret")
	}
}
