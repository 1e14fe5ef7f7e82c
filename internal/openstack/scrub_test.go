package openstack

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ferrometal/ferro/internal/scrub"
)

// A service that repeats the credentials it received in its error answer
// (Neutron, Keystone, a misbehaving proxy) does not get them into the
// error gophercloud builds from that answer.
func TestNew_ErrorAnswersAreScrubbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"NeutronError": {"message": "got `+r.Header.Get("Authorization")+` token `+r.Header.Get("X-Auth-Token")+
			` body `+string(body)+` and the conductor's db password db-pw-333"}}`)
	}))
	defer srv.Close()
	for _, o := range []Options{
		{Section: "[neutron]", AuthType: "http_basic", Username: "ferro", Password: "basic-pw-111", Endpoint: srv.URL},
		{Section: "[neutron]", AuthType: "none", Endpoint: srv.URL},
	} {
		o.Secrets = scrub.New("db-pw-333")
		sc, err := New(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		sc.MoreHeaders = map[string]string{"X-Auth-Token": "request-token-222"}
		if o.AuthType == "http_basic" {
			sc.MoreHeaders["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte("ferro:basic-pw-111"))
		}
		_, err = sc.Get(context.Background(), sc.ServiceURL("ports"), nil, nil)
		if err == nil {
			t.Fatal("no error")
		}
		for _, leak := range []string{"basic-pw-111", "request-token-222", "db-pw-333", base64.StdEncoding.EncodeToString([]byte("ferro:basic-pw-111"))} {
			if strings.Contains(err.Error(), leak) {
				t.Errorf("%s: %q leaked into %v", o.AuthType, leak, err)
			}
		}
		if !strings.Contains(err.Error(), "***") {
			t.Errorf("%s: %v has no mask", o.AuthType, err)
		}
	}
}
