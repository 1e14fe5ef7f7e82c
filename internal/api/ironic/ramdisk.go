package ironic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/ferrometal/ferro/internal/callback"
	"github.com/ferrometal/ferro/internal/conductor"
	"github.com/ferrometal/ferro/internal/inspection"
	"github.com/ferrometal/ferro/internal/inventory"
	"github.com/ferrometal/ferro/internal/jsonlimit"
	"github.com/ferrometal/ferro/internal/pyjson"
	"github.com/ferrometal/ferro/internal/reportbudget"
)

// The ramdisk's endpoint of the agent inspect interface:
// POST /v1/continue_inspection (Ironic's ContinueInspectionController).
// It is public: the agent has no credentials. What protects it is the
// lookup (the node must be waiting for a report, found by its ports'
// MACs or its cached BMC addresses), ferro's callback token when one was
// issued to ferro-agent, one generic 404 for every lookup failure, and
// the bounds on the body: its size, its nesting and its values, and the
// memory budget the reports in flight share with the inspector's
// /v1/continue.

// Reports is what the endpoint hands a report to: the conductor.
type Reports interface {
	ContinueInspection(ctx context.Context, r conductor.InspectionReport) (*conductor.Accepted, error)
}

// RamdiskOptions configure the ramdisk endpoint.
type RamdiskOptions struct {
	// Reports takes the reports; nil leaves the endpoint out (404).
	Reports Reports
	// Disabled is [api]enable_ramdisk_endpoints = false: 403.
	Disabled bool
	// MaxBodyBytes is [api]max_json_body_size_inspection; 0 means 16 MiB.
	MaxBodyBytes int64
	// Budget is the report memory budget shared with the inspector's
	// /v1/continue; nil gives the endpoint one of its own.
	Budget *reportbudget.Budget
	// ReadTimeout bounds reading one report, from the moment it has its
	// share of the budget; QueueTimeout how long it waits for the share
	// before a 503 (the agent retries). 0: 60 s and 30 s.
	ReadTimeout, QueueTimeout time.Duration
	// HeartbeatTimeout is [api]ramdisk_heartbeat_timeout, in the lookup
	// answer's config.
	HeartbeatTimeout int
}

// Microversion 1.84 made /v1/continue_inspection a bare metal API
// endpoint; 1.1 (no header, as the agent sends) is accepted too, as
// ironic-inspector's drop-in.
const v84ContinueInspection = 84

// defaultInspectionBody is [api]max_json_body_size_inspection's default.
const defaultInspectionBody = 16 << 20

// Ironic's JSON body middleware answers these itself, in this shape.
var (
	bodyTooLarge = []byte(`{"faultcode": "Client", "faultstring": "Request body is too large. Please contact the service administrator."}`)
	bodyTooDeep  = []byte(`{"faultcode": "Client", "faultstring": "Request body JSON is nested too deeply. Please contact the service administrator."}`)
)

// continueInspection is POST /v1/continue_inspection.
func (s *server) continueInspection(rq *request) error {
	o := s.opts.Ramdisk
	if o.Reports == nil {
		return resourceNotFound()
	}
	if o.Disabled {
		return forbidden(rq.r.URL.Path)
	}
	q, err := rq.queryArgs("node_uuid")
	if err != nil {
		return err
	}
	nodeUUID, err := q.uuidArg("node_uuid")
	if err != nil {
		return err
	}
	newEndpoint := rq.minor >= v84ContinueInspection
	if (!newEndpoint && rq.minor != minMinor) || (nodeUUID != "" && !newEndpoint) {
		// Ironic's "small lie": 1.1 is accepted too.
		return notFound("API version 1.%d or newer is required", v84ContinueInspection)
	}
	if nodeUUID != "" {
		nodeUUID = canonicalUUID(nodeUUID)
	}

	body, share, err := s.readReport(rq, o)
	if err != nil || body == nil {
		return err
	}
	released := false
	defer func() {
		if !released {
			share.Release()
		}
	}()
	rep, err := decodeInspectionData(body)
	if err != nil {
		var re *rawError
		if errors.As(err, &re) {
			return rq.writeJSON(re.status, re.body)
		}
		return err
	}
	macs, bmcs := lookupAttributes(rep.Raw)
	token := rq.r.Header.Get(callback.TokenHeader)
	if token == "" {
		token = rep.Typed.InspectionToken
	}
	acc, err := o.Reports.ContinueInspection(rq.ctx(), conductor.InspectionReport{
		Report: rep, MACs: macs, BMCAddresses: bmcs, NodeUUID: nodeUUID, Token: token,
		AgentToken: newEndpoint, Done: share.Release,
	})
	switch {
	case errors.Is(err, conductor.ErrLookupFailed):
		return notFound("%s", conductor.ErrLookupFailed.Error())
	case errors.Is(err, conductor.ErrNoLookupInfo):
		return badRequest("%s", conductor.ErrNoLookupInfo.Error())
	case err != nil:
		return err
	}
	released = true // the worker releases it when the report is processed
	if !newEndpoint {
		// ironic-inspector's answer.
		b := append([]byte(`{"uuid": `), appendString(nil, acc.Node.UUID)...)
		return rq.writeJSON(http.StatusAccepted, append(b, '}'))
	}
	return rq.writeJSON(http.StatusAccepted, lookupAnswer(rq.base, acc, o.HeartbeatTimeout))
}

// readReport reads the body under its share of the budget: reserved
// before a byte is read, for the worst a body of its announced length may
// cost, and fitted to what it costs once read. A nil body with a nil
// error means the answer was written (413).
func (s *server) readReport(rq *request, o RamdiskOptions) ([]byte, *reportbudget.Reservation, error) {
	limit := o.MaxBodyBytes
	if limit <= 0 {
		limit = defaultInspectionBody
	}
	if rq.r.ContentLength > limit {
		return nil, nil, rq.writeJSON(http.StatusRequestEntityTooLarge, bodyTooLarge)
	}
	queueTimeout, readTimeout := o.QueueTimeout, o.ReadTimeout
	if queueTimeout <= 0 {
		queueTimeout = 30 * time.Second
	}
	if readTimeout <= 0 {
		readTimeout = 60 * time.Second
	}
	queue, cancel := context.WithTimeout(rq.ctx(), queueTimeout)
	defer cancel()
	budget := o.Budget
	if budget == nil {
		budget = defaultReportBudget()
	}
	share, err := budget.Reserve(queue, rq.r.ContentLength)
	if err != nil {
		rq.w.Header().Set("Retry-After", "5")
		return nil, nil, newError(http.StatusServiceUnavailable, "Too many inspection reports are being processed, retry later.")
	}
	// Deadlines that run from the share, not from the connection's first
	// byte, so that a report that queued has its full time to arrive.
	rc := http.NewResponseController(rq.w)
	_ = rc.SetReadDeadline(time.Now().Add(readTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(2 * readTimeout))
	body, err := reportbudget.ReadBody(http.MaxBytesReader(rq.w, rq.r.Body, limit), rq.r.ContentLength, limit)
	if err != nil {
		share.Release()
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			return nil, nil, rq.writeJSON(http.StatusRequestEntityTooLarge, bodyTooLarge)
		case errors.Is(err, os.ErrDeadlineExceeded):
			rq.w.Header().Set("Connection", "close")
			return nil, nil, newError(http.StatusRequestTimeout, "The report was not received within %s.", readTimeout)
		}
		return nil, nil, badRequest("Cannot read the request body: %v", err)
	}
	share.Fit(body)
	return body, share, nil
}

// defaultReportBudget is the budget of an endpoint given none (tests).
var defaultReportBudget = sync.OnceValue(func() *reportbudget.Budget {
	b, _ := reportbudget.New(reportbudget.Options{MaxBody: defaultInspectionBody, MaxValues: inventory.DefaultMaxValues})
	return b
})

// decodeInspectionData decodes the report within the bounds every entry
// point applies and checks it against Ironic's schema (DATA_VALIDATOR): an
// object with an inventory object whose interfaces are a non-empty list
// of objects with a string mac_address; bmc_address and bmc_v6address
// strings or null. Anything else is 400 and changes nothing.
func decodeInspectionData(body []byte) (*inspection.Report, error) {
	rep, err := inspection.Decode(body)
	if errors.Is(err, jsonlimit.ErrTooDeep) {
		return nil, &rawError{status: http.StatusBadRequest, body: bodyTooDeep}
	}
	if err != nil {
		// The decoder's message unless the schema words it as Ironic does.
		var doc any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&doc) == nil {
			if serr := checkInspectionSchema(doc); serr != "" {
				return nil, badRequest("Schema error for data: %s", serr)
			}
		} else {
			return nil, badRequest("Invalid JSON in the request body: %v", err)
		}
		return nil, badRequest("Invalid inspection data: %v", err)
	}
	if serr := checkInspectionSchema(rep.Raw); serr != "" {
		return nil, badRequest("Schema error for data: %s", serr)
	}
	return rep, nil
}

// checkInspectionSchema returns jsonschema's message for the first
// violation of Ironic's DATA_VALIDATOR, "" when there is none.
func checkInspectionSchema(doc any) string {
	top, ok := doc.(map[string]any)
	if !ok {
		return reprShort(doc) + " is not of type 'object'"
	}
	raw, ok := top["inventory"]
	if !ok {
		return "'inventory' is a required property"
	}
	inv, ok := raw.(map[string]any)
	if !ok {
		return reprShort(raw) + " is not of type 'object'"
	}
	for _, k := range []string{"bmc_address", "bmc_v6address"} {
		if v, ok := inv[k]; ok && v != nil {
			if _, isString := v.(string); !isString {
				return reprShort(v) + " is not of type 'string', 'null'"
			}
		}
	}
	rawIfaces, ok := inv["interfaces"]
	if !ok {
		return "'interfaces' is a required property"
	}
	ifaces, ok := rawIfaces.([]any)
	if !ok {
		return reprShort(rawIfaces) + " is not of type 'array'"
	}
	if len(ifaces) == 0 {
		return "[] should be non-empty"
	}
	for _, raw := range ifaces {
		iface, ok := raw.(map[string]any)
		if !ok {
			return reprShort(raw) + " is not of type 'object'"
		}
		mac, ok := iface["mac_address"]
		if !ok {
			return "'mac_address' is a required property"
		}
		if _, isString := mac.(string); !isString {
			return reprShort(mac) + " is not of type 'string'"
		}
	}
	return ""
}

// reprShort is Python's repr, cut: an error must not echo a report.
func reprShort(v any) string {
	s := pyjson.Repr(v)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// lookupAttributes are the report's valid MAC addresses, normalised
// (Ironic's get_valid_mac_addresses, invalid ones ignored), and its BMC
// addresses that are set.
func lookupAttributes(raw map[string]any) (macs, bmcs []string) {
	inv, _ := raw["inventory"].(map[string]any)
	ifaces, _ := inv["interfaces"].([]any)
	for _, r := range ifaces {
		iface, _ := r.(map[string]any)
		s, _ := iface["mac_address"].(string)
		if mac, ok := inventory.NormalizeMAC(s); ok && !slices.Contains(macs, mac) {
			macs = append(macs, mac)
		}
	}
	for _, k := range []string{"bmc_address", "bmc_v6address"} {
		if s, _ := inv[k].(string); s != "" {
			bmcs = append(bmcs, s)
		}
	}
	return macs, bmcs
}

// lookupAnswer is Ironic's lookup answer (API ≥ 1.84): the node's uuid,
// properties, instance_info and driver_internal_info (the token masked)
// with links, and the agent's config with the token. ferro has no
// metrics, containers or heartbeats for the agent: the values are
// Ironic's defaults, which tell the agent to use none of them.
func lookupAnswer(base string, acc *conductor.Accepted, heartbeatTimeout int) []byte {
	n := acc.Node
	if heartbeatTimeout <= 0 {
		heartbeatTimeout = 300
	}
	b := []byte(`{"node": {"uuid": `)
	b = appendString(b, n.UUID)
	b = append(b, `, "properties": `...)
	b = appendMap(b, n.Properties, nil)
	b = append(b, `, "instance_info": `...)
	b = appendMap(b, n.InstanceInfo, maskInstanceInfo)
	b = append(b, `, "driver_internal_info": `...)
	b = appendMap(b, n.DriverInternalInfo, maskAgentToken)
	b = append(b, `, "links": `...)
	b = appendLinks(b, base, "nodes", n.UUID)
	b = append(b, `}, "config": {"metrics": {"backend": "noop", "prepend_host": false, "prepend_uuid": false, "prepend_host_reverse": true, "global_prefix": null}, `+
		`"metrics_statsd": {"statsd_host": "localhost", "statsd_port": 8125}, "heartbeat_timeout": `...)
	b = strconv.AppendInt(b, int64(heartbeatTimeout), 10)
	b = append(b, `, "agent_containers": {"allow_arbitrary_containers": false, "allowed_containers": [], `+
		`"container_steps_file": "/etc/ironic-python-agent.d/mysteps.yaml", "runner": "podman", "pull_options": [], `+
		`"run_options": ["--rm", "--network=host"]}, "agent_token": `...)
	if acc.AgentToken == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, acc.AgentToken)
	}
	skipBMC := n.Interface("management") == "redfish" || n.Interface("management") == "idrac-redfish"
	b = append(b, `, "agent_token_required": true, "agent_md5_checksum_enable": true, "disable_deep_image_inspection": false, `+
		`"permitted_image_formats": ["raw", "gpt", "qcow2", "iso"], "agent_skip_bmc_detect": `...)
	b = strconv.AppendBool(b, skipBMC)
	b = append(b, `, "enable_bios_bootloader_install": false, "tls_min_version": "1.3", "tls_cipher_suites": null}}`...)
	return b
}

// rawError is an answer whose body is given whole (the JSON body
// middleware's).
type rawError struct {
	status int
	body   []byte
}

func (e *rawError) Error() string { return string(e.body) }

// v22Heartbeat is MINOR_22_LOOKUP_HEARTBEAT.
const v22Heartbeat = 22

// heartbeatArgs are HeartbeatController.post's arguments, in order.
var heartbeatArgs = []string{"node_ident", "callback_url", "agent_version", "agent_token",
	"agent_verify_ca", "agent_status", "agent_status_message"}

// heartbeat is POST /v1/heartbeat[/{node}], the deploy agent's heartbeat.
// ferro deploys nothing, so a heartbeat changes nothing; it answers as
// Ironic 21.4 does up to the conductor: the arguments (400 "Unexpected
// arguments", "Missing mandatory parameter", also below 1.22, where
// Ironic checks them first), the version (404 below 1.22), the node (404)
// and the agent token (400), then 202.
func (s *server) heartbeat(rq *request) error {
	ident := rq.r.PathValue("node")
	allowed := heartbeatArgs
	if ident != "" {
		allowed = heartbeatArgs[1:]
	}
	var m map[string]any
	if v, err := rq.readJSON(); err != nil {
		return err
	} else if obj, ok := v.(map[string]any); ok {
		m = obj // Ironic takes the arguments of an object body only
	}
	if err := unexpectedArgs(maps.Keys(m), allowed); err != nil {
		return err
	}
	if ident == "" {
		var err error
		if ident, err = requiredString(m, "node_ident"); err != nil {
			return err
		}
	}
	if _, err := requiredString(m, "callback_url"); err != nil {
		return err
	}
	token, err := stringArg(m, "agent_token")
	if err != nil {
		return err
	}
	if rq.minor < v22Heartbeat {
		return notFound("Resource could not be found.")
	}
	n, err := lookupNode(rq.ctx(), s.store, ident, rq.minor)
	if err != nil {
		return err
	}
	if want, _ := n.DriverInternalInfo["agent_secret_token"].(string); want == "" || token != want {
		return badRequest("Invalid or missing agent token received.")
	}
	return rq.writeEmpty(http.StatusAccepted)
}
