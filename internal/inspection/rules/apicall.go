package rules

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/ferrometal/ferro/internal/pyjson"
)

// Bounds of the api-call action, on top of its timeout.
const (
	// maxAPICallBody is how much of an answer is read (and dropped).
	maxAPICallBody = 1 << 20
	// maxAPICallRetries bounds the retries argument.
	maxAPICallRetries = 10
	// maxAPICallBackoff bounds one wait between tries, as urllib3's
	// DEFAULT_BACKOFF_MAX.
	maxAPICallBackoff = 120 * time.Second
)

// apiCall is Ironic's CallAPIHookAction: a GET of url, retried on
// connection errors and on 429, 500, 502, 503 and 504 with urllib3's
// exponential backoff, failing on any answer ≥ 400. Unlike requests,
// redirects are followed only to the URL's own host, and the answer is
// read only up to 1 MiB.
func apiCall(ctx context.Context, env *Env, args map[string]any) error {
	rawURL := pyjson.Str(args["url"])
	timeout, retries, backoff := 5.0, int64(3), 0.3
	var err error
	if v, ok := args["timeout"]; ok {
		if timeout, err = pyjson.Float(v); err != nil {
			return actionFailure("Invalid parameter: %v", err)
		}
		if timeout <= 0 {
			return actionFailure("Invalid parameter: timeout must be greater than zero")
		}
	}
	if v, ok := args["retries"]; ok {
		if retries, err = pyjson.Int(v); err != nil {
			return actionFailure("Invalid parameter: %v", err)
		}
		retries = min(max(retries, 0), maxAPICallRetries)
	}
	if v, ok := args["backoff_factor"]; ok {
		if backoff, err = pyjson.Float(v); err != nil {
			return actionFailure("Invalid parameter: %v", err)
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return actionFailure("Request to %s failed: Invalid URL %s: No scheme supplied or not http(s)", rawURL, pyjson.Repr(rawURL))
	}
	client := env.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	c.Timeout = time.Duration(timeout * float64(time.Second))
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != u.Host {
			return fmt.Errorf("redirect to %s refused: only redirects to %s are followed", req.URL.Host, u.Host)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	if proxies, ok := args["proxies"].(map[string]any); ok && len(proxies) > 0 {
		base, _ := c.Transport.(*http.Transport)
		if base == nil {
			base, _ = http.DefaultTransport.(*http.Transport)
		}
		t := base.Clone()
		t.Proxy = func(req *http.Request) (*url.URL, error) {
			if p, ok := proxies[req.URL.Scheme].(string); ok && p != "" {
				return url.Parse(p)
			}
			return nil, nil
		}
		c.Transport = t
	}
	headers, _ := args["headers"].(map[string]any)

	var last error
	for try := int64(0); try <= retries; try++ {
		if try > 1 {
			wait := time.Duration(backoff * float64(int64(1)<<(try-1)) * float64(time.Second))
			select {
			case <-ctx.Done():
				return actionFailure("Request to %s failed: %v", rawURL, ctx.Err())
			case <-time.After(min(wait, maxAPICallBackoff)):
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
		if err != nil {
			return actionFailure("Request to %s failed: %v", rawURL, err)
		}
		for k, v := range headers {
			req.Header.Set(k, pyjson.Str(v))
		}
		resp, err := c.Do(req)
		if err != nil {
			last = err
			continue
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAPICallBody))
		resp.Body.Close()
		switch resp.StatusCode {
		case 429, 500, 502, 503, 504:
			last = fmt.Errorf("%d %s for url: %s", resp.StatusCode, http.StatusText(resp.StatusCode), rawURL)
			continue
		}
		if resp.StatusCode >= 400 {
			return actionFailure("Request to %s failed: %d %s for url: %s", rawURL, resp.StatusCode, http.StatusText(resp.StatusCode), rawURL)
		}
		env.Log.Info("api-call answered", "url", rawURL, "status", resp.StatusCode, "node", env.Node.UUID())
		return nil
	}
	return actionFailure("Request to %s failed: %v", rawURL, last)
}
