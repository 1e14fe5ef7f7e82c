package redfish

import (
	"bytes"
	"io"
	"net/http"
	"sync"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
	"golang.org/x/sync/singleflight"
)

// linkClient is the schemas.Client every gofish object of an operation
// uses: each link is resolved against the BMC's origin before gofish builds
// a request for it, and a BMC's error answer becomes a short HTTPError.
// With a memo, each resource is read once however often it is linked.
type linkClient struct {
	api    *gofish.APIClient
	origin origin
	memo   *memo
}

var _ schemas.Client = (*linkClient)(nil)

func (c *linkClient) GetSettings() schemas.ClientSettings { return c.api.GetSettings() }

func (c *linkClient) Get(link string) (*http.Response, error) {
	return c.GetWithHeaders(link, nil)
}

func (c *linkClient) GetWithHeaders(link string, headers map[string]string) (*http.Response, error) {
	p, err := c.origin.resolve(link)
	if err != nil {
		return nil, err
	}
	get := func() (*http.Response, error) {
		resp, err := c.api.GetWithHeaders(p, headers)
		return resp, httpError(http.MethodGet, p, err)
	}
	if c.memo == nil || len(headers) > 0 {
		return get()
	}
	return c.memo.get(p, get)
}

func (c *linkClient) Post(link string, payload any) (*http.Response, error) {
	return c.PostWithHeaders(link, payload, nil)
}

func (c *linkClient) PostWithHeaders(link string, payload any, headers map[string]string) (*http.Response, error) {
	return c.send(http.MethodPost, link, func(p string) (*http.Response, error) { return c.api.PostWithHeaders(p, payload, headers) })
}

func (c *linkClient) PostMultipart(link string, payload map[string]io.Reader) (*http.Response, error) {
	return c.PostMultipartWithHeaders(link, payload, nil)
}

func (c *linkClient) PostMultipartWithHeaders(link string, payload map[string]io.Reader, headers map[string]string) (*http.Response, error) {
	return c.send(http.MethodPost, link, func(p string) (*http.Response, error) {
		return c.api.PostMultipartWithHeaders(p, payload, headers)
	})
}

func (c *linkClient) Patch(link string, payload any) (*http.Response, error) {
	return c.PatchWithHeaders(link, payload, nil)
}

func (c *linkClient) PatchWithHeaders(link string, payload any, headers map[string]string) (*http.Response, error) {
	return c.send(http.MethodPatch, link, func(p string) (*http.Response, error) { return c.api.PatchWithHeaders(p, payload, headers) })
}

func (c *linkClient) Put(link string, payload any) (*http.Response, error) {
	return c.PutWithHeaders(link, payload, nil)
}

func (c *linkClient) PutWithHeaders(link string, payload any, headers map[string]string) (*http.Response, error) {
	return c.send(http.MethodPut, link, func(p string) (*http.Response, error) { return c.api.PutWithHeaders(p, payload, headers) })
}

func (c *linkClient) Delete(link string) (*http.Response, error) {
	return c.DeleteWithHeaders(link, nil)
}

func (c *linkClient) DeleteWithHeaders(link string, headers map[string]string) (*http.Response, error) {
	return c.send(http.MethodDelete, link, func(p string) (*http.Response, error) { return c.api.DeleteWithHeaders(p, headers) })
}

func (c *linkClient) send(method, link string, do func(path string) (*http.Response, error)) (*http.Response, error) {
	p, err := c.origin.resolve(link)
	if err != nil {
		return nil, err
	}
	resp, err := do(p)
	return resp, httpError(method, p, err)
}

// memo remembers the GETs of one operation (an inspection), so that a
// resource linked from several places (a drive listed by two storage
// controllers, read for the disks and for the root disk) is fetched
// once. Concurrent reads of one path (gofish fetches collection members in
// parallel) wait for a single request. Failed reads are remembered too,
// until forgetFailures, which do calls before it tries the operation again.
type memo struct {
	flight singleflight.Group

	mu      sync.Mutex
	results map[string]memoResult
	fetches map[string]int // requests sent per path, for tests and logs
}

type memoResult struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func newMemo() *memo {
	return &memo{results: map[string]memoResult{}, fetches: map[string]int{}}
}

func (m *memo) get(path string, fetch func() (*http.Response, error)) (*http.Response, error) {
	m.mu.Lock()
	r, ok := m.results[path]
	m.mu.Unlock()
	if !ok {
		v, _, _ := m.flight.Do(path, func() (any, error) {
			m.mu.Lock()
			if r, ok := m.results[path]; ok {
				m.mu.Unlock()
				return r, nil
			}
			m.fetches[path]++
			m.mu.Unlock()
			r := memoResult{}
			resp, err := fetch()
			if err == nil {
				r.status, r.header = resp.StatusCode, resp.Header
				r.body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			r.err = err
			m.mu.Lock()
			m.results[path] = r
			m.mu.Unlock()
			return r, nil
		})
		r = v.(memoResult)
	}
	if r.err != nil {
		return nil, r.err
	}
	return &http.Response{StatusCode: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader(r.body)),
		ContentLength: int64(len(r.body))}, nil
}

// forgetFailures drops the remembered failures, so that another attempt
// asks again for what failed and only for that.
func (m *memo) forgetFailures() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, r := range m.results {
		if r.err != nil {
			delete(m.results, p)
		}
	}
}

// maxFetches is the largest number of requests sent for one path.
func (m *memo) maxFetches() (path string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for p, c := range m.fetches {
		if c > n || (c == n && p < path) {
			path, n = p, c
		}
	}
	return path, n
}

// remote is one operation's view of a BMC: the service root and every
// object reached from it use the linkClient.
type remote struct {
	*linkClient
	service *gofish.Service
}

func newRemote(api *gofish.APIClient, o origin, m *memo) *remote {
	lc := &linkClient{api: api, origin: o, memo: m}
	svc := *api.Service
	svc.SetClient(lc)
	return &remote{linkClient: lc, service: &svc}
}
