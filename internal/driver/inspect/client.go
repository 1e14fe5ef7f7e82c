package inspect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetalintrospection/v1/introspection"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/driver"
	"github.com/ferrometal/ferro/internal/openstack"
)

// TokenHeader carries the per-inspection callback token on the start
// request (a ferro extension; ironic-inspector ignores unknown headers).
const TokenHeader = callback.TokenHeader

// HTTPClient talks to an ironic-inspector-compatible API with gophercloud.
type HTTPClient struct {
	sc *gophercloud.ServiceClient
}

// ClientOptions configure NewHTTPClient.
type ClientOptions struct {
	// Endpoint is the inspector's root URL (http://host:5050); /v1 is appended.
	Endpoint string
	// Auth is how requests authenticate ([inspector]auth_type and the
	// options that go with it); its Endpoint and ServiceType are set here.
	Auth openstack.Options
	// HTTPClient, when set, carries the requests (the in-process transport in all-in-one mode).
	HTTPClient *http.Client
}

// NewHTTPClient returns a client for the inspector at o.Endpoint.
func NewHTTPClient(o ClientOptions) (*HTTPClient, error) {
	if o.Endpoint == "" {
		return nil, errors.New("inspector endpoint is not set")
	}
	endpoint := gophercloud.NormalizeURL(o.Endpoint)
	if !hasV1(endpoint) {
		endpoint += "v1/"
	}
	a := o.Auth
	a.Section, a.Endpoint, a.ServiceType = "[inspector]", endpoint, "baremetal-introspection"
	if o.HTTPClient != nil {
		a.Transport, a.Timeout = o.HTTPClient.Transport, o.HTTPClient.Timeout
	}
	sc, err := openstack.New(context.Background(), a)
	if err != nil {
		return nil, fmt.Errorf("inspector client: %w", err)
	}
	return &HTTPClient{sc: sc}, nil
}

func hasV1(endpoint string) bool {
	return len(endpoint) >= 4 && endpoint[len(endpoint)-4:] == "/v1/"
}

// Start implements Client.
func (c *HTTPClient) Start(ctx context.Context, nodeUUID string, manageBoot bool, token string) error {
	sc := c.sc
	if token != "" {
		withToken := *c.sc
		withToken.MoreHeaders = map[string]string{TokenHeader: token}
		for k, v := range c.sc.MoreHeaders {
			withToken.MoreHeaders[k] = v
		}
		sc = &withToken
	}
	// gophercloud's StartIntrospection builds the manage_boot query but
	// does not send it (v2.16), which would make a real ironic-inspector
	// reboot the node itself; build the request here.
	url := sc.ServiceURL("introspection", nodeUUID) + "?manage_boot=" + strconv.FormatBool(manageBoot)
	_, err := sc.Post(ctx, url, nil, nil, &gophercloud.RequestOpts{OkCodes: []int{http.StatusAccepted}})
	if err != nil {
		return fmt.Errorf("start introspection of node %s (manage_boot=%t): %w", nodeUUID, manageBoot, err)
	}
	return nil
}

// Status implements Client. An introspection the inspector does not know is
// reported as failed, so the node does not wait for the timeout.
func (c *HTTPClient) Status(ctx context.Context, nodeUUID string) (driver.InspectStatus, error) {
	in, err := introspection.GetIntrospectionStatus(ctx, c.sc, nodeUUID).Extract()
	if err != nil {
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return driver.InspectStatus{Finished: true, Error: "the inspector has no introspection for this node"}, nil
		}
		return driver.InspectStatus{}, fmt.Errorf("get introspection status of node %s: %w", nodeUUID, err)
	}
	return driver.InspectStatus{Finished: in.Finished, Error: in.Error}, nil
}

// Abort implements Client. An introspection that already ended or that the
// inspector does not know needs no abort.
func (c *HTTPClient) Abort(ctx context.Context, nodeUUID string) error {
	err := introspection.AbortIntrospection(ctx, c.sc, nodeUUID).ExtractErr()
	if err == nil || gophercloud.ResponseCodeIs(err, http.StatusNotFound) || gophercloud.ResponseCodeIs(err, http.StatusBadRequest) {
		return nil
	}
	return fmt.Errorf("abort introspection of node %s: %w", nodeUUID, err)
}

// Data implements Client.
func (c *HTTPClient) Data(ctx context.Context, nodeUUID string) (map[string]any, error) {
	var data map[string]any
	if err := introspection.GetIntrospectionData(ctx, c.sc, nodeUUID).ExtractInto(&data); err != nil {
		return nil, fmt.Errorf("get introspection data of node %s: %w", nodeUUID, err)
	}
	return data, nil
}

// HandlerTransport serves requests with an in-process handler, so the
// conductor reaches a same-process inspector through its real HTTP API
// without a socket.
type HandlerTransport struct{ Handler http.Handler }

// RoundTrip implements http.RoundTripper.
func (t HandlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := newRecorder()
	t.Handler.ServeHTTP(rec, req)
	return rec.response(req), nil
}
