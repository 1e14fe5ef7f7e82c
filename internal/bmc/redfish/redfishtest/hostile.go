package redfishtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Hostile is a Redfish service that tries to send its client elsewhere and
// to make it repeat secrets. It serves a small valid tree (a service root,
// a session service, one System with a processor, a NIC and memory) and
// each attack is a field, switched with Set:
type Hostile struct {
	srv *httptest.Server
	// URL is the service's base URL.
	URL string

	mu sync.Mutex
	// SystemLink is the @odata.id of the Systems collection's member
	// (default HostileSystemPath): "@127.0.0.1:PORT/x" is the userinfo
	// trick, "http://elsewhere/x" an absolute link.
	SystemLink string
	// ResetTarget is the target of the System's ComputerSystem.Reset.
	ResetTarget string
	// SessionLocation is the Location of a new session.
	SessionLocation string
	// SessionsLink is the service root's Links.Sessions.
	SessionsLink string
	// Redirect, when set, answers every GET of the System with a 307 to it.
	Redirect string
	// EchoCredentials makes every error answer quote what the client sent:
	// its Authorization header, its X-Auth-Token and the body of its login.
	EchoCredentials bool
	// FailSystem answers the System with 500 (quoting, with
	// EchoCredentials, the credentials).
	FailSystem bool
	// EndlessSystem sends the System as a JSON body that never ends;
	// EndlessError answers it with a 500 whose text body never ends.
	EndlessSystem, EndlessError bool
	// EndlessSent counts the bytes sent of endless bodies.
	EndlessSent int64

	// Requests are what it received, in order.
	Requests []HostileRequest
	login    string
}

// HostileRequest is one request Hostile received.
type HostileRequest struct {
	Method, Path  string
	Authorization string
	Token         string
}

// HostileSystemPath is the System's path in Hostile's tree.
const HostileSystemPath = "/redfish/v1/Systems/1"

// HostileToken is the session token Hostile hands out.
const HostileToken = "hostile-session-token-4f9d2a"

// NewHostile starts the service; it stops when the test ends.
func NewHostile(t testing.TB) *Hostile {
	h := &Hostile{}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	h.URL = h.srv.URL
	t.Cleanup(h.srv.Close)
	return h
}

// Set changes attacks or reads state under the service's lock.
func (h *Hostile) Set(fn func(h *Hostile)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fn(h)
}

// DriverInfo is a node's driver_info for this service.
func (h *Hostile) DriverInfo(password string) map[string]any {
	return map[string]any{"redfish_address": h.URL, "redfish_username": User, "redfish_password": password,
		"redfish_system_id": HostileSystemPath}
}

func (h *Hostile) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	p := strings.TrimRight(r.URL.Path, "/")
	h.Requests = append(h.Requests, HostileRequest{Method: r.Method, Path: r.URL.RequestURI(),
		Authorization: r.Header.Get("Authorization"), Token: r.Header.Get("X-Auth-Token")})
	endless := (h.EndlessSystem || h.EndlessError) && p == HostileSystemPath && r.Method == http.MethodGet
	asError := h.EndlessError
	h.mu.Unlock()
	if endless {
		h.endless(w, asError)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	sys := HostileSystemPath
	switch {
	case p == "/redfish/v1" && r.Method == http.MethodGet:
		sessions := h.SessionsLink
		if sessions == "" {
			sessions = "/redfish/v1/SessionService/Sessions"
		}
		h.json(w, 200, map[string]any{"@odata.id": "/redfish/v1/", "Id": "RootService", "RedfishVersion": "1.6.0",
			"Systems": link("/redfish/v1/Systems"), "SessionService": link("/redfish/v1/SessionService"),
			"Links": map[string]any{"Sessions": link(sessions)}})
	case r.Method == http.MethodPost && strings.HasSuffix(p, "/Sessions"):
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<16))
		h.login = string(body)
		loc := h.SessionLocation
		if loc == "" {
			loc = "/redfish/v1/SessionService/Sessions/1"
		}
		w.Header().Set("X-Auth-Token", HostileToken)
		w.Header().Set("Location", loc)
		h.json(w, 201, map[string]any{"Id": "1"})
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	case p == "/redfish/v1/Systems":
		member := h.SystemLink
		if member == "" {
			member = sys
		}
		h.json(w, 200, map[string]any{"@odata.id": "/redfish/v1/Systems", "Members@odata.count": 1, "Members": []any{link(member)}})
	case p == sys && r.Method == http.MethodGet:
		switch {
		case h.Redirect != "":
			http.Redirect(w, r, h.Redirect, http.StatusTemporaryRedirect)
		case h.FailSystem:
			h.fail(w, r, http.StatusInternalServerError)
		default:
			target := h.ResetTarget
			if target == "" {
				target = sys + "/Actions/ComputerSystem.Reset"
			}
			h.json(w, 200, map[string]any{"@odata.id": sys, "@odata.type": "#ComputerSystem.v1_10_0.ComputerSystem", "Id": "1",
				"Name": "hostile", "PowerState": "Off", "Manufacturer": "Hostile", "Model": "H1",
				"Boot":             map[string]any{"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None"},
				"ProcessorSummary": map[string]any{"Count": 1, "LogicalProcessorCount": 4},
				"MemorySummary":    map[string]any{"TotalSystemMemoryGiB": 8},
				"Processors":       link(sys + "/Processors"), "EthernetInterfaces": link(sys + "/EthernetInterfaces"),
				"Actions": map[string]any{"#ComputerSystem.Reset": map[string]any{"target": target,
					"ResetType@Redfish.AllowableValues": []string{"On", "ForceOff", "ForceRestart"}}}})
		}
	case p == sys+"/Processors":
		h.json(w, 200, map[string]any{"@odata.id": p, "Members@odata.count": 1, "Members": []any{link(p + "/CPU1")}})
	case p == sys+"/Processors/CPU1":
		h.json(w, 200, map[string]any{"@odata.id": p, "Id": "CPU1", "ProcessorType": "CPU", "InstructionSet": "x86-64",
			"ProcessorArchitecture": "x86", "TotalCores": 4, "TotalThreads": 4, "Model": "Hostile CPU"})
	case p == sys+"/EthernetInterfaces":
		h.json(w, 200, map[string]any{"@odata.id": p, "Members@odata.count": 1, "Members": []any{link(p + "/NIC1")}})
	case p == sys+"/EthernetInterfaces/NIC1":
		h.json(w, 200, map[string]any{"@odata.id": p, "Id": "NIC1", "MACAddress": "52:54:00:66:66:01",
			"Status": map[string]any{"State": "Enabled", "Health": "OK"}})
	case r.Method == http.MethodPost && strings.Contains(p, "/Actions/"):
		w.WriteHeader(http.StatusNoContent)
	default:
		h.fail(w, r, http.StatusNotFound)
	}
}

// fail answers an error in Redfish's shape; with EchoCredentials its
// messages repeat what the client sent, as some BMCs echo a request.
func (h *Hostile) fail(w http.ResponseWriter, r *http.Request, code int) {
	msg := "A general error has occurred."
	detail := "The request failed."
	if h.EchoCredentials {
		msg = fmt.Sprintf("request from %s with login %s", r.Header.Get("Authorization"), h.login)
		detail = fmt.Sprintf("session %s authorization %q login body %s", r.Header.Get("X-Auth-Token"), r.Header.Get("Authorization"), h.login)
	}
	h.json(w, code, map[string]any{"error": map[string]any{"code": "Base.1.8.GeneralError", "message": msg,
		"@Message.ExtendedInfo": []any{map[string]any{"MessageId": "Base.1.8.InternalError", "Message": detail}}}})
}

// endless writes a JSON body that never ends, until the client goes away
// (or 1 GiB, so that a broken client does not take the machine with it).
func (h *Hostile) endless(w http.ResponseWriter, asError bool) {
	chunk := []byte(strings.Repeat("A", 64<<10))
	if asError {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusInternalServerError)
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(200)
		io.WriteString(w, `{"@odata.id":"`+HostileSystemPath+`","Id":"1","Name":"`)
	}
	for sent := int64(0); sent < 1<<30; sent += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil {
			break
		}
		h.mu.Lock()
		h.EndlessSent += int64(len(chunk))
		h.mu.Unlock()
	}
}

func (h *Hostile) json(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func link(p string) map[string]any { return map[string]any{"@odata.id": p} }

// Witness is an HTTP server that must receive nothing: where a hostile BMC
// points its client. It records what reaches it.
type Witness struct {
	URL string

	mu   sync.Mutex
	hits []string
}

// NewWitness starts one; it stops when the test ends.
func NewWitness(t testing.TB) *Witness {
	wt := &Witness{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wt.mu.Lock()
		wt.hits = append(wt.hits, fmt.Sprintf("%s %s token=%q authorization=%q", r.Method, r.URL.RequestURI(),
			r.Header.Get("X-Auth-Token"), r.Header.Get("Authorization")))
		wt.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	wt.URL = srv.URL
	t.Cleanup(srv.Close)
	return wt
}

// Hits are the requests it received.
func (wt *Witness) Hits() []string {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return append([]string(nil), wt.hits...)
}
