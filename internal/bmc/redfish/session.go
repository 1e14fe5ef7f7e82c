package redfish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/stmcginnis/gofish/schemas"
)

// errNoSessionService is wrapped when the service root links no Sessions
// collection: auto then uses basic auth, as Ironic's does.
var errNoSessionService = errors.New("the service has no SessionService")

// session is a login: the token and, when the BMC gave a Location on its
// origin, the path to DELETE at logout.
type session struct {
	token string
	path  string
	// refusedLocation is a Location the BMC answered that is not on its
	// origin: the session is used but never deleted (it expires on the
	// BMC), and nothing is sent there.
	refusedLocation error
}

// login opens a session as Ironic's (sushy's) session auth does: the
// Sessions collection from the service root's Links (else from its
// SessionService), POST {"UserName", "Password"}, the token from
// X-Auth-Token. Each link is resolved against the origin, so neither the
// credentials nor the token can be sent anywhere else.
func login(ctx context.Context, hc *http.Client, o origin, ep Endpoint) (*session, error) {
	var root struct {
		Links struct {
			Sessions schemas.Link `json:"Sessions"`
		} `json:"Links"`
		SessionService schemas.Link `json:"SessionService"`
	}
	if err := getJSON(ctx, hc, o, "/redfish/v1/", &root); err != nil {
		return nil, err
	}
	sessions := root.Links.Sessions.String()
	if sessions == "" && root.SessionService.String() != "" {
		var ss struct {
			Sessions schemas.Link `json:"Sessions"`
		}
		if err := getJSON(ctx, hc, o, root.SessionService.String(), &ss); err != nil {
			return nil, err
		}
		sessions = ss.Sessions.String()
	}
	if sessions == "" {
		return nil, errNoSessionService
	}
	path, err := o.resolve(sessions)
	if err != nil {
		return nil, fmt.Errorf("the Sessions collection: %w", err)
	}
	body, _ := json.Marshal(map[string]string{"UserName": ep.Username, "Password": ep.Password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.String()+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := answerError(http.MethodPost, path, resp); err != nil {
		return nil, err
	}
	s := &session{token: resp.Header.Get("X-Auth-Token")}
	if s.token == "" {
		return nil, fmt.Errorf("POST %s: the BMC answered %d without an X-Auth-Token", path, resp.StatusCode)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if s.path, err = o.resolve(loc); err != nil {
			s.refusedLocation = fmt.Errorf("session Location: %w", err)
		}
	}
	return s, nil
}

// getJSON reads one resource with hc, unauthenticated (the service root
// needs no credentials).
func getJSON(ctx context.Context, hc *http.Client, o origin, link string, v any) error {
	path, err := o.resolve(link)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.String()+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := answerError(http.MethodGet, path, resp); err != nil {
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: decode: %w", path, err)
	}
	return nil
}

// answerError is the HTTPError of an answer that is not 2xx, built as
// gofish builds its own.
func answerError(method, path string, resp *http.Response) error {
	if resp.StatusCode/100 == 2 {
		return nil
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: HTTP %d: read the answer: %w", method, path, resp.StatusCode, err)
	}
	return httpError(method, path, schemas.ConstructError(resp.StatusCode, b))
}
