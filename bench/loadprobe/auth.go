package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// credential is what the probe's requests carry.
type credential struct {
	user, password string // http_basic
	token          string // keystone
}

func (c credential) apply(r *http.Request) {
	switch {
	case c.token != "":
		r.Header.Set("X-Auth-Token", c.token)
	case c.user != "":
		r.SetBasicAuth(c.user, c.password)
	}
}

// setupAuth returns the server's environment and the client's credential for -auth.
func setupAuth(c probeConfig, dir string) ([]string, credential, error) {
	switch c.auth {
	case "noauth":
		return nil, credential{}, nil
	case "http_basic":
		hash, err := bcrypt.GenerateFromPassword([]byte("probe-pass"), bcrypt.DefaultCost)
		if err != nil {
			return nil, credential{}, err
		}
		file := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(file, []byte("probe:"+string(hash)+"\n"), 0o600); err != nil {
			return nil, credential{}, err
		}
		return []string{"FERRO_DEFAULT_AUTH_STRATEGY=http_basic", "FERRO_DEFAULT_HTTP_BASIC_AUTH_USER_FILE=" + file},
			credential{user: "probe", password: "probe-pass"}, nil
	case "keystone":
		k := c.keystone
		if k.url == "" || k.password == "" {
			return nil, credential{}, fmt.Errorf("-auth keystone needs -keystone-url and -keystone-password")
		}
		token, err := systemToken(k)
		if err != nil {
			return nil, credential{}, err
		}
		return []string{"FERRO_DEFAULT_AUTH_STRATEGY=keystone",
				"FERRO_KEYSTONE_AUTHTOKEN_AUTH_URL=" + k.url, "FERRO_KEYSTONE_AUTHTOKEN_USERNAME=" + k.user,
				"FERRO_KEYSTONE_AUTHTOKEN_PASSWORD=" + k.password, "FERRO_KEYSTONE_AUTHTOKEN_PROJECT_NAME=" + k.project},
			credential{token: token}, nil
	}
	return nil, credential{}, fmt.Errorf("-auth %q: want noauth, http_basic or keystone", c.auth)
}

// systemToken issues a system-scoped token for the probe's requests.
func systemToken(k keystoneFlags) (string, error) {
	body := map[string]any{"auth": map[string]any{
		"identity": map[string]any{"methods": []string{"password"}, "password": map[string]any{
			"user": map[string]any{"name": k.user, "domain": map[string]any{"id": "default"}, "password": k.password}}},
		"scope": map[string]any{"system": map[string]any{"all": true}},
	}}
	b, _ := json.Marshal(body)
	cl := &http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Post(k.url+"/auth/tokens", "application/json", bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("issue a Keystone token: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("issue a Keystone token: %s", resp.Status)
	}
	return resp.Header.Get("X-Subject-Token"), nil
}
