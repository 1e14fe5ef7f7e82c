package vbmc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxRequestBody bounds every Redfish request body.
const maxRequestBody = 64 << 10

// Redfish resource paths.
const (
	rfRoot      = "/redfish/v1"
	rfSystems   = rfRoot + "/Systems"
	rfManagers  = rfRoot + "/Managers"
	rfSessions  = rfRoot + "/SessionService/Sessions"
	rfCdID      = "Cd"
	rfProcessor = "CPU0"
	rfDIMM      = "DIMM0"
	rfStorageID = "1"
)

// resetTypes are the ComputerSystem.Reset types the systems accept.
var resetTypes = []string{"On", "ForceOn", "ForceOff", "GracefulShutdown", "ForceRestart", "GracefulRestart", "PowerCycle", "Nmi"}

var (
	bootTargets = []string{string(BootNone), string(BootPxe), string(BootHdd), string(BootCd), string(BootBiosSetup)}
	bootEnabled = []string{string(BootDisabled), string(BootOnce), string(BootContinuous)}
	bootModes   = []string{string(BootUEFI), string(BootLegacy)}
)

type obj = map[string]any

func link(path string) obj { return obj{"@odata.id": path} }

func enabledOK() obj { return obj{"State": "Enabled", "Health": "OK"} }

// redfishHandler routes the Redfish service. Paths are matched without a
// trailing slash ("/redfish/v1/" is the service root, as sushy asks for it).
func (s *Server) redfishHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /redfish", s.getVersions)
	mux.HandleFunc("GET "+rfRoot, s.getRoot)
	mux.HandleFunc("GET "+rfRoot+"/SessionService", s.auth(s.getSessionService))
	mux.HandleFunc("GET "+rfSessions, s.auth(s.getSessions))
	mux.HandleFunc("POST "+rfSessions, s.postSession)
	mux.HandleFunc("GET "+rfSessions+"/{id}", s.auth(s.getSession))
	mux.HandleFunc("DELETE "+rfSessions+"/{id}", s.auth(s.deleteSession))

	mux.HandleFunc("GET "+rfSystems, s.auth(s.getSystems))
	if s.cfg.RequestLog {
		mux.HandleFunc("GET /ferro-vbmc/v1/machines", s.auth(s.getMachines))
	}
	mux.HandleFunc("GET "+rfSystems+"/{sys}", s.auth(s.machine(s.getSystem)))
	mux.HandleFunc("PATCH "+rfSystems+"/{sys}", s.auth(s.machine(s.patchSystem)))
	mux.HandleFunc("POST "+rfSystems+"/{sys}/Actions/ComputerSystem.Reset", s.auth(s.machine(s.postReset)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Processors", s.auth(s.machine(s.getProcessors)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Processors/{id}", s.auth(s.machine(s.getProcessor)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Memory", s.auth(s.machine(s.getMemories)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Memory/{id}", s.auth(s.machine(s.getMemory)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/EthernetInterfaces", s.auth(s.machine(s.getNICs)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/EthernetInterfaces/{id}", s.auth(s.machine(s.getNIC)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/SimpleStorage", s.auth(s.machine(s.getSimpleStorages)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/SimpleStorage/{id}", s.auth(s.machine(s.getSimpleStorage)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Storage", s.auth(s.machine(s.getStorages)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Storage/{id}", s.auth(s.machine(s.getStorage)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Storage/{id}/Drives/{drive}", s.auth(s.machine(s.getDrive)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Storage/{id}/Volumes", s.auth(s.machine(s.getVolumes)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Storage/{id}/Volumes/{drive}", s.auth(s.machine(s.getVolume)))
	mux.HandleFunc("GET "+rfSystems+"/{sys}/Bios", s.auth(s.machine(s.getBios)))

	mux.HandleFunc("GET "+rfManagers, s.auth(s.getManagers))
	mux.HandleFunc("GET "+rfManagers+"/{sys}", s.auth(s.machine(s.getManager)))
	mux.HandleFunc("GET "+rfManagers+"/{sys}/VirtualMedia", s.auth(s.machine(s.getVirtualMedias)))
	mux.HandleFunc("GET "+rfManagers+"/{sys}/VirtualMedia/{id}", s.auth(s.machine(s.vmedia(s.getVirtualMedia))))
	mux.HandleFunc("POST "+rfManagers+"/{sys}/VirtualMedia/{id}/Actions/VirtualMedia.InsertMedia", s.auth(s.machine(s.vmedia(s.postInsertMedia))))
	mux.HandleFunc("POST "+rfManagers+"/{sys}/VirtualMedia/{id}/Actions/VirtualMedia.EjectMedia", s.auth(s.machine(s.vmedia(s.postEjectMedia))))

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r.URL.Path = strings.TrimRight(p, "/")
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
		w.Header().Set("OData-Version", "4.0")
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		mux.ServeHTTP(rec, r)
		s.log.Debug("redfish request", "method", r.Method, "path", r.URL.Path, "status", rec.status)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// redfishError writes a Redfish error body (DMTF Base message registry).
func redfishError(w http.ResponseWriter, status int, messageID, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	body := obj{"error": obj{
		"code":    "Base.1.8.GeneralError",
		"message": msg,
		"@Message.ExtendedInfo": []obj{{
			"@odata.type": "#Message.v1_1_1.Message",
			"MessageId":   "Base.1.8." + messageID,
			"Message":     msg,
			"Severity":    "Warning",
		}},
	}}
	data, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(data)
}

// etagOf is a weak ETag over a resource's JSON.
func etagOf(data []byte) string {
	h := fnv.New64a()
	h.Write(data)
	return `W/"` + strconv.FormatUint(h.Sum64(), 16) + `"`
}

// writeJSON writes a resource with an ETag over its JSON.
func writeJSON(w http.ResponseWriter, status int, body any) {
	writeJSONTag(w, status, body, "")
}

// writeJSONTag writes a resource with the given ETag (empty: over its JSON).
func writeJSONTag(w http.ResponseWriter, status int, body any, etag string) {
	data, err := json.Marshal(body)
	if err != nil {
		redfishError(w, http.StatusInternalServerError, "InternalError", "encode the response: %v", err)
		return
	}
	if etag == "" {
		etag = etagOf(data)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("ETag", etag)
	w.WriteHeader(status)
	w.Write(data)
}

// systemETag covers what a PATCH can change, the boot override, and not
// PowerState: a client that powered the system on and then PATCHes with
// the ETag it read before (gofish does) is not refused for a change it made.
func systemETag(m *Machine) string { return etagOfBoot(m.Boot()) }

func etagOfBoot(b BootOverride) string {
	data, _ := json.Marshal(b)
	return etagOf(data)
}

// ifMatch checks an If-Match header against the resource's current ETag,
// weak and strong forms alike (sushy retries a weak one as strong).
func ifMatch(r *http.Request, current string) bool {
	want := r.Header.Get("If-Match")
	if want == "" || want == "*" {
		return true
	}
	cur := strings.TrimPrefix(current, "W/")
	for _, tag := range strings.Split(want, ",") {
		if strings.TrimPrefix(strings.TrimSpace(tag), "W/") == cur {
			return true
		}
	}
	return false
}

// decodeBody decodes a bounded JSON body into v; an empty body is {}.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) bool {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			redfishError(w, http.StatusRequestEntityTooLarge, "GeneralError", "the request body is larger than %d bytes", maxRequestBody)
			return false
		}
		redfishError(w, http.StatusBadRequest, "MalformedJSON", "read the request body: %v", err)
		return false
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if err := json.Unmarshal(data, v); err != nil {
		redfishError(w, http.StatusBadRequest, "MalformedJSON", "the request body is not valid JSON for this resource: %v", err)
		return false
	}
	return true
}

// auth admits requests with a valid X-Auth-Token or basic credentials.
func (s *Server) auth(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if token := r.Header.Get("X-Auth-Token"); token != "" {
			if _, ok := s.sessions.lookup(token, time.Now()); ok {
				next(w, r)
				return
			}
			redfishError(w, http.StatusUnauthorized, "NoValidSession", "the session token is not valid or has expired")
			return
		}
		if user, pass, ok := r.BasicAuth(); ok && credentialsMatch(user, pass, s.cfg.Username, s.cfg.Password) {
			next(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="ferro-vbmc"`)
		redfishError(w, http.StatusUnauthorized, "NoValidSession", "authentication required: a valid X-Auth-Token or basic credentials")
	}
}

type machineHandler func(w http.ResponseWriter, r *http.Request, m *Machine)

// machine resolves the {sys} path element to a Machine.
func (s *Server) machine(next machineHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("sys")
		m := s.machines[name]
		if m == nil {
			redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no system or manager %q", name)
			return
		}
		op := r.Method + " " + r.URL.Path
		m.wait(r.Context())
		if m.inject500() {
			m.record("redfish", op, http.StatusInternalServerError)
			redfishError(w, http.StatusInternalServerError, "InternalError", "injected fault (redfish_500_count)")
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next(rec, r, m)
		m.record("redfish", op, rec.status)
	}
}

func (s *Server) getVersions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{"v1": rfRoot + "/"})
}

func (s *Server) getRoot(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":    "#ServiceRoot.v1_5_0.ServiceRoot",
		"@odata.id":      rfRoot + "/",
		"Id":             "RootService",
		"Name":           "ferro-vbmc",
		"RedfishVersion": "1.6.0",
		"UUID":           nameUUID("service-root"),
		"Product":        "ferro-vbmc",
		"Systems":        link(rfSystems),
		"Managers":       link(rfManagers),
		"SessionService": link(rfRoot + "/SessionService"),
		"Links":          obj{"Sessions": link(rfSessions)},
	})
}

func (s *Server) getSessionService(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":    "#SessionService.v1_1_8.SessionService",
		"@odata.id":      rfRoot + "/SessionService",
		"Id":             "SessionService",
		"Name":           "Session Service",
		"ServiceEnabled": true,
		"SessionTimeout": int(s.opts.SessionTimeout / time.Second),
		"Sessions":       link(rfSessions),
	})
}

func (s *Server) getSessions(w http.ResponseWriter, r *http.Request) {
	var members []obj
	for _, id := range s.sessions.ids(time.Now()) {
		members = append(members, link(rfSessions+"/"+id))
	}
	writeJSON(w, http.StatusOK, collection("#SessionCollection.SessionCollection", rfSessions, "Session Collection", members))
}

func sessionJSON(sess *session) obj {
	return obj{
		"@odata.type": "#Session.v1_3_0.Session",
		"@odata.id":   rfSessions + "/" + sess.ID,
		"Id":          sess.ID,
		"Name":        "User Session",
		"UserName":    sess.UserName,
	}
}

// postSession logs in (no auth needed: the credentials are in the body).
func (s *Server) postSession(w http.ResponseWriter, r *http.Request) {
	var body struct {
		UserName *string `json:"UserName"`
		Password *string `json:"Password"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.UserName == nil || body.Password == nil {
		redfishError(w, http.StatusBadRequest, "PropertyMissing", "UserName and Password are required")
		return
	}
	if !credentialsMatch(*body.UserName, *body.Password, s.cfg.Username, s.cfg.Password) {
		redfishError(w, http.StatusUnauthorized, "NoValidSession", "wrong user name or password")
		return
	}
	sess, token, err := s.sessions.create(*body.UserName, time.Now())
	if err != nil {
		redfishError(w, http.StatusServiceUnavailable, "SessionLimitExceeded", "%v", err)
		return
	}
	w.Header().Set("X-Auth-Token", token)
	w.Header().Set("Location", rfSessions+"/"+sess.ID)
	writeJSON(w, http.StatusCreated, sessionJSON(sess))
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.sessions.get(r.PathValue("id"))
	if !ok {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no session %q", r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, sessionJSON(sess))
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	if !s.sessions.delete(r.PathValue("id")) {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no session %q", r.PathValue("id"))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func collection(odataType, path, name string, members []obj) obj {
	if members == nil {
		members = []obj{}
	}
	return obj{
		"@odata.type":         odataType,
		"@odata.id":           path,
		"Name":                name,
		"Members":             members,
		"Members@odata.count": len(members),
	}
}

func (s *Server) getSystems(w http.ResponseWriter, r *http.Request) {
	members := make([]obj, 0, len(s.order))
	for _, m := range s.order {
		members = append(members, link(rfSystems+"/"+m.Name()))
	}
	writeJSON(w, http.StatusOK, collection("#ComputerSystemCollection.ComputerSystemCollection", rfSystems, "Computer System Collection", members))
}

func (s *Server) systemJSON(ctx context.Context, m *Machine) (obj, error) {
	on, err := m.PowerState(ctx)
	if err != nil {
		return nil, err
	}
	power := "Off"
	if on {
		power = "On"
	}
	boot := m.Boot()
	sys := rfSystems + "/" + m.Name()
	c := m.Config
	return obj{
		"@odata.type":  "#ComputerSystem.v1_13_0.ComputerSystem",
		"@odata.id":    sys,
		"Id":           m.Name(),
		"Name":         m.Name(),
		"UUID":         m.UUID,
		"Manufacturer": c.Manufacturer,
		"Model":        c.Product,
		"SerialNumber": c.Serial,
		"SKU":          c.SKU,
		"SystemType":   "Virtual",
		"PowerState":   power,
		"Status":       enabledOK(),
		"BiosVersion":  "1.0",
		"Boot": obj{
			"BootSourceOverrideTarget":                          string(boot.Target),
			"BootSourceOverrideTarget@Redfish.AllowableValues":  bootTargets,
			"BootSourceOverrideEnabled":                         string(boot.Enabled),
			"BootSourceOverrideEnabled@Redfish.AllowableValues": bootEnabled,
			"BootSourceOverrideMode":                            string(boot.Mode),
			"BootSourceOverrideMode@Redfish.AllowableValues":    bootModes,
		},
		"ProcessorSummary": obj{
			"Count":                 c.CPUs,
			"CoreCount":             c.CPUs,
			"LogicalProcessorCount": c.CPUs,
			"Model":                 "ferro virtual CPU",
			"Status":                enabledOK(),
		},
		"MemorySummary": obj{
			"TotalSystemMemoryGiB": c.MemoryMB / 1024,
			"Status":               enabledOK(),
		},
		"Processors":         link(sys + "/Processors"),
		"Memory":             link(sys + "/Memory"),
		"EthernetInterfaces": link(sys + "/EthernetInterfaces"),
		"SimpleStorage":      link(sys + "/SimpleStorage"),
		"Storage":            link(sys + "/Storage"),
		"Bios":               link(sys + "/Bios"),
		"Links": obj{
			"ManagedBy": []obj{link(rfManagers + "/" + m.Name())},
		},
		"Actions": obj{
			"#ComputerSystem.Reset": obj{
				"target":                            sys + "/Actions/ComputerSystem.Reset",
				"ResetType@Redfish.AllowableValues": resetTypes,
			},
		},
	}, nil
}

func (s *Server) getSystem(w http.ResponseWriter, r *http.Request, m *Machine) {
	body, err := s.systemJSON(r.Context(), m)
	if err != nil {
		redfishError(w, http.StatusInternalServerError, "InternalError", "read the power state of %s: %v", m.Name(), err)
		return
	}
	writeJSONTag(w, http.StatusOK, body, systemETag(m))
}

// patchSystem sets the boot source override, the only writable property.
func (s *Server) patchSystem(w http.ResponseWriter, r *http.Request, m *Machine) {
	var body map[string]json.RawMessage
	if !decodeBody(w, r, &body) {
		return
	}
	for k := range body {
		if k != "Boot" {
			redfishError(w, http.StatusBadRequest, "PropertyNotWritable", "property %s is not writable (only Boot is)", k)
			return
		}
	}
	var patch map[string]string
	if raw, ok := body["Boot"]; ok {
		if err := json.Unmarshal(raw, &patch); err != nil {
			redfishError(w, http.StatusBadRequest, "PropertyValueTypeError", "Boot: %v", err)
			return
		}
	}
	cur := m.Boot()
	next := cur
	for k, v := range patch {
		var allowed []string
		switch k {
		case "BootSourceOverrideTarget":
			allowed = bootTargets
			next.Target = BootDevice(v)
		case "BootSourceOverrideEnabled":
			allowed = bootEnabled
			next.Enabled = BootEnabled(v)
		case "BootSourceOverrideMode":
			allowed = bootModes
			next.Mode = BootMode(v)
		default:
			redfishError(w, http.StatusBadRequest, "PropertyNotWritable", "property Boot/%s is not writable", k)
			return
		}
		if !slices.Contains(allowed, v) {
			redfishError(w, http.StatusBadRequest, "PropertyValueNotInList", "Boot/%s: %q is not one of %s", k, v, strings.Join(allowed, ", "))
			return
		}
	}
	// A target set on a disabled override applies once, as BMCs do when
	// only BootSourceOverrideTarget is sent.
	if _, hasEnabled := patch["BootSourceOverrideEnabled"]; !hasEnabled && next.Target != BootNone && cur.Enabled == BootDisabled {
		next.Enabled = BootOnce
	}
	if !ifMatch(r, etagOfBoot(cur)) || !m.compareAndSetBoot(cur, next) {
		redfishError(w, http.StatusPreconditionFailed, "PreconditionFailed", "If-Match does not match the current ETag of %s (its boot override changed)", m.Name())
		return
	}
	s.log.Info("boot override set", "machine", m.Name(), "target", next.Target, "enabled", next.Enabled, "mode", next.Mode)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) postReset(w http.ResponseWriter, r *http.Request, m *Machine) {
	var body struct {
		ResetType *string `json:"ResetType"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.ResetType == nil {
		redfishError(w, http.StatusBadRequest, "ActionParameterMissing", "ResetType is required")
		return
	}
	ctx := r.Context()
	var err error
	switch rt := *body.ResetType; rt {
	case "On", "ForceOn":
		err = m.PowerOn(ctx)
	case "ForceOff":
		err = m.PowerOff(ctx)
	case "GracefulShutdown":
		err = m.Shutdown(ctx)
	case "ForceRestart", "GracefulRestart":
		err = m.Reset(ctx)
	case "PowerCycle":
		err = m.PowerCycle(ctx)
	case "Nmi":
		err = m.NMI(ctx)
	default:
		redfishError(w, http.StatusBadRequest, "ActionParameterNotSupported", "ResetType %q is not one of %s", rt, strings.Join(resetTypes, ", "))
		return
	}
	if errors.Is(err, ErrConflict) {
		redfishError(w, http.StatusConflict, "ResourceInStandby", "%v", err)
		return
	}
	if err != nil {
		redfishError(w, http.StatusInternalServerError, "InternalError", "%v", err)
		return
	}
	s.log.Info("reset", "machine", m.Name(), "type", *body.ResetType)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) getProcessors(w http.ResponseWriter, r *http.Request, m *Machine) {
	p := rfSystems + "/" + m.Name() + "/Processors"
	writeJSON(w, http.StatusOK, collection("#ProcessorCollection.ProcessorCollection", p, "Processors Collection", []obj{link(p + "/" + rfProcessor)}))
}

// getProcessor reports the machine's CPUs as one socket whose threads are
// the logical CPUs (sushy counts TotalThreads).
func (s *Server) getProcessor(w http.ResponseWriter, r *http.Request, m *Machine) {
	if r.PathValue("id") != rfProcessor {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no processor %q", r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":           "#Processor.v1_7_0.Processor",
		"@odata.id":             rfSystems + "/" + m.Name() + "/Processors/" + rfProcessor,
		"Id":                    rfProcessor,
		"Name":                  "Processor",
		"Socket":                "CPU 0",
		"ProcessorType":         "CPU",
		"ProcessorArchitecture": "x86",
		"InstructionSet":        "x86-64",
		"Manufacturer":          m.Config.Manufacturer,
		"Model":                 "ferro virtual CPU",
		"MaxSpeedMHz":           2400,
		"TotalCores":            m.Config.CPUs,
		"TotalThreads":          m.Config.CPUs,
		"Status":                enabledOK(),
	})
}

func (s *Server) getMemories(w http.ResponseWriter, r *http.Request, m *Machine) {
	p := rfSystems + "/" + m.Name() + "/Memory"
	writeJSON(w, http.StatusOK, collection("#MemoryCollection.MemoryCollection", p, "Memory Collection", []obj{link(p + "/" + rfDIMM)}))
}

func (s *Server) getMemory(w http.ResponseWriter, r *http.Request, m *Machine) {
	if r.PathValue("id") != rfDIMM {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no memory %q", r.PathValue("id"))
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":       "#Memory.v1_7_0.Memory",
		"@odata.id":         rfSystems + "/" + m.Name() + "/Memory/" + rfDIMM,
		"Id":                rfDIMM,
		"Name":              "DIMM 0",
		"MemoryType":        "DRAM",
		"MemoryDeviceType":  "DDR4",
		"CapacityMiB":       m.Config.MemoryMB,
		"OperatingSpeedMhz": 3200,
		"Status":            enabledOK(),
	})
}

func nicID(i int) string { return "nic" + strconv.Itoa(i) }

func (s *Server) getNICs(w http.ResponseWriter, r *http.Request, m *Machine) {
	p := rfSystems + "/" + m.Name() + "/EthernetInterfaces"
	var members []obj
	for i := range m.Config.MACs {
		members = append(members, link(p+"/"+nicID(i)))
	}
	writeJSON(w, http.StatusOK, collection("#EthernetInterfaceCollection.EthernetInterfaceCollection", p, "Ethernet Interface Collection", members))
}

func (s *Server) getNIC(w http.ResponseWriter, r *http.Request, m *Machine) {
	id := r.PathValue("id")
	i := -1
	for k := range m.Config.MACs {
		if nicID(k) == id {
			i = k
		}
	}
	if i < 0 {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no ethernet interface %q", id)
		return
	}
	mac := strings.ToLower(m.Config.MACs[i])
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":         "#EthernetInterface.v1_4_0.EthernetInterface",
		"@odata.id":           rfSystems + "/" + m.Name() + "/EthernetInterfaces/" + id,
		"Id":                  id,
		"Name":                "Ethernet Interface " + strconv.Itoa(i),
		"MACAddress":          mac,
		"PermanentMACAddress": mac,
		"SpeedMbps":           1000,
		"LinkStatus":          "LinkUp",
		"InterfaceEnabled":    true,
		"Status":              enabledOK(),
	})
}

func diskBytes(gb int) int64 { return int64(gb) << 30 }

func (s *Server) getSimpleStorages(w http.ResponseWriter, r *http.Request, m *Machine) {
	p := rfSystems + "/" + m.Name() + "/SimpleStorage"
	writeJSON(w, http.StatusOK, collection("#SimpleStorageCollection.SimpleStorageCollection", p, "Simple Storage Collection", []obj{link(p + "/" + rfStorageID)}))
}

func (s *Server) getSimpleStorage(w http.ResponseWriter, r *http.Request, m *Machine) {
	if r.PathValue("id") != rfStorageID {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no simple storage %q", r.PathValue("id"))
		return
	}
	devices := []obj{}
	for i, gb := range m.Config.DisksGB {
		devices = append(devices, obj{
			"Name":          "disk" + strconv.Itoa(i),
			"CapacityBytes": diskBytes(gb),
			"Status":        enabledOK(),
		})
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.type": "#SimpleStorage.v1_2_0.SimpleStorage",
		"@odata.id":   rfSystems + "/" + m.Name() + "/SimpleStorage/" + rfStorageID,
		"Id":          rfStorageID,
		"Name":        "Simple Storage Controller",
		"Devices":     devices,
		"Status":      enabledOK(),
	})
}

func (s *Server) getStorages(w http.ResponseWriter, r *http.Request, m *Machine) {
	p := rfSystems + "/" + m.Name() + "/Storage"
	writeJSON(w, http.StatusOK, collection("#StorageCollection.StorageCollection", p, "Storage Collection", []obj{link(p + "/" + rfStorageID)}))
}

func (s *Server) getStorage(w http.ResponseWriter, r *http.Request, m *Machine) {
	if r.PathValue("id") != rfStorageID {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no storage %q", r.PathValue("id"))
		return
	}
	p := rfSystems + "/" + m.Name() + "/Storage/" + rfStorageID
	drives := []obj{}
	for i := range m.Config.DisksGB {
		drives = append(drives, link(p+"/Drives/"+strconv.Itoa(i)))
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":        "#Storage.v1_8_0.Storage",
		"@odata.id":          p,
		"Id":                 rfStorageID,
		"Name":               "Local Storage Controller",
		"Drives":             drives,
		"Drives@odata.count": len(drives),
		"Volumes":            link(p + "/Volumes"),
		"Status":             enabledOK(),
	})
}

// diskIndex resolves Storage/{id}/…/{drive} to a disk index, or -1.
func diskIndex(r *http.Request, m *Machine) int {
	i, err := strconv.Atoi(r.PathValue("drive"))
	if r.PathValue("id") != rfStorageID || err != nil || i < 0 || i >= len(m.Config.DisksGB) || strconv.Itoa(i) != r.PathValue("drive") {
		return -1
	}
	return i
}

// getVolumes reports one raw volume per disk (sushy's volumes_sizes_bytes,
// which Ironic's redfish inspection reads beside SimpleStorage).
func (s *Server) getVolumes(w http.ResponseWriter, r *http.Request, m *Machine) {
	if r.PathValue("id") != rfStorageID {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no storage %q", r.PathValue("id"))
		return
	}
	p := rfSystems + "/" + m.Name() + "/Storage/" + rfStorageID + "/Volumes"
	var members []obj
	for i := range m.Config.DisksGB {
		members = append(members, link(p+"/"+strconv.Itoa(i)))
	}
	writeJSON(w, http.StatusOK, collection("#VolumeCollection.VolumeCollection", p, "Volume Collection", members))
}

func (s *Server) getVolume(w http.ResponseWriter, r *http.Request, m *Machine) {
	i := diskIndex(r, m)
	if i < 0 {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no volume %q", r.PathValue("drive"))
		return
	}
	p := rfSystems + "/" + m.Name() + "/Storage/" + rfStorageID
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":   "#Volume.v1_3_0.Volume",
		"@odata.id":     p + "/Volumes/" + strconv.Itoa(i),
		"Id":            strconv.Itoa(i),
		"Name":          "disk" + strconv.Itoa(i),
		"CapacityBytes": diskBytes(m.Config.DisksGB[i]),
		"VolumeType":    "RawDevice",
		"Links":         obj{"Drives": []obj{link(p + "/Drives/" + strconv.Itoa(i))}},
		"Status":        enabledOK(),
	})
}

func (s *Server) getDrive(w http.ResponseWriter, r *http.Request, m *Machine) {
	i := diskIndex(r, m)
	if i < 0 {
		redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no drive %q", r.PathValue("drive"))
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":   "#Drive.v1_6_0.Drive",
		"@odata.id":     rfSystems + "/" + m.Name() + "/Storage/" + rfStorageID + "/Drives/" + strconv.Itoa(i),
		"Id":            strconv.Itoa(i),
		"Name":          "disk" + strconv.Itoa(i),
		"CapacityBytes": diskBytes(m.Config.DisksGB[i]),
		"MediaType":     "HDD",
		"Protocol":      "SATA",
		"Status":        enabledOK(),
	})
}

// getBios reports a few read-only attributes; BootMode follows the boot
// override's mode.
func (s *Server) getBios(w http.ResponseWriter, r *http.Request, m *Machine) {
	mode := "Bios"
	if m.Boot().Mode == BootUEFI {
		mode = "Uefi"
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":       "#Bios.v1_1_0.Bios",
		"@odata.id":         rfSystems + "/" + m.Name() + "/Bios",
		"Id":                "Bios",
		"Name":              "BIOS Configuration Current Settings",
		"AttributeRegistry": "BiosAttributeRegistry.v1_0_0",
		"Attributes": obj{
			"BootMode":      mode,
			"ProcTurboMode": "Enabled",
			"NicBoot1":      "NetworkBoot",
			"QuietBoot":     false,
			"SerialNumber":  m.Config.Serial,
		},
	})
}

func (s *Server) getManagers(w http.ResponseWriter, r *http.Request) {
	members := make([]obj, 0, len(s.order))
	for _, m := range s.order {
		members = append(members, link(rfManagers+"/"+m.Name()))
	}
	writeJSON(w, http.StatusOK, collection("#ManagerCollection.ManagerCollection", rfManagers, "Manager Collection", members))
}

func (s *Server) getManager(w http.ResponseWriter, r *http.Request, m *Machine) {
	p := rfManagers + "/" + m.Name()
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":     "#Manager.v1_10_0.Manager",
		"@odata.id":       p,
		"Id":              m.Name(),
		"Name":            "Manager of " + m.Name(),
		"ManagerType":     "BMC",
		"UUID":            nameUUID("manager:" + m.Name()),
		"Model":           "ferro-vbmc",
		"FirmwareVersion": "1.0",
		"Status":          enabledOK(),
		"VirtualMedia":    link(p + "/VirtualMedia"),
		"Links": obj{
			"ManagerForServers": []obj{link(rfSystems + "/" + m.Name())},
		},
	})
}

func (s *Server) getVirtualMedias(w http.ResponseWriter, r *http.Request, m *Machine) {
	p := rfManagers + "/" + m.Name() + "/VirtualMedia"
	writeJSON(w, http.StatusOK, collection("#VirtualMediaCollection.VirtualMediaCollection", p, "Virtual Media Services", []obj{link(p + "/" + rfCdID)}))
}

// vmedia resolves the {id} path element to the one virtual CD.
func (s *Server) vmedia(next machineHandler) machineHandler {
	return func(w http.ResponseWriter, r *http.Request, m *Machine) {
		if r.PathValue("id") != rfCdID {
			redfishError(w, http.StatusNotFound, "ResourceMissingAtURI", "no virtual media %q (the one device is %s)", r.PathValue("id"), rfCdID)
			return
		}
		next(w, r, m)
	}
}

func (s *Server) getVirtualMedia(w http.ResponseWriter, r *http.Request, m *Machine) {
	v := m.VirtualMedia()
	p := rfManagers + "/" + m.Name() + "/VirtualMedia/" + rfCdID
	// No media reads as null, as DMTF's schema and real BMCs have it.
	connected, image, imageName := "NotConnected", any(nil), any(nil)
	if v.Inserted {
		connected, image, imageName = "URI", v.Image, v.ImageName
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.type":       "#VirtualMedia.v1_4_0.VirtualMedia",
		"@odata.id":         p,
		"Id":                rfCdID,
		"Name":              "Virtual CD",
		"MediaTypes":        []string{"CD", "DVD"},
		"Image":             image,
		"ImageName":         imageName,
		"ConnectedVia":      connected,
		"Inserted":          v.Inserted,
		"WriteProtected":    v.WriteProtected,
		"VerifyCertificate": false,
		"Actions": obj{
			"#VirtualMedia.InsertMedia": obj{"target": p + "/Actions/VirtualMedia.InsertMedia"},
			"#VirtualMedia.EjectMedia":  obj{"target": p + "/Actions/VirtualMedia.EjectMedia"},
		},
	})
}

func (s *Server) postInsertMedia(w http.ResponseWriter, r *http.Request, m *Machine) {
	var body struct {
		Image                *string `json:"Image"`
		Inserted             *bool   `json:"Inserted"`
		WriteProtected       *bool   `json:"WriteProtected"`
		TransferProtocolType string  `json:"TransferProtocolType"`
		TransferMethod       string  `json:"TransferMethod"`
		UserName             string  `json:"UserName"`
		Password             string  `json:"Password"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	if body.Image == nil || *body.Image == "" {
		redfishError(w, http.StatusBadRequest, "ActionParameterMissing", "Image is required")
		return
	}
	if body.Inserted != nil && !*body.Inserted {
		redfishError(w, http.StatusBadRequest, "ActionParameterNotSupported", "Inserted=false is not supported: an image is inserted when given")
		return
	}
	switch body.TransferProtocolType {
	case "", "HTTP", "HTTPS":
	default:
		redfishError(w, http.StatusBadRequest, "ActionParameterNotSupported", "TransferProtocolType %q is not supported (HTTP, HTTPS)", body.TransferProtocolType)
		return
	}
	switch body.TransferMethod {
	case "", "Stream", "Upload":
	default:
		redfishError(w, http.StatusBadRequest, "ActionParameterNotSupported", "TransferMethod %q is not supported", body.TransferMethod)
		return
	}
	if v := m.VirtualMedia(); v.Inserted {
		redfishError(w, http.StatusConflict, "ResourceInUse", "%s is inserted in %s; eject it first", v.Image, m.Name())
		return
	}
	v, err := s.fetchImage(r.Context(), m, *body.Image, body.UserName, body.Password)
	if err != nil {
		s.log.Warn("virtual media insert failed", "machine", m.Name(), "error", err)
		redfishError(w, http.StatusBadRequest, "ActionParameterValueFormatError", "%v", err)
		return
	}
	v.WriteProtected = body.WriteProtected == nil || *body.WriteProtected
	if err := m.insertMedia(v); err != nil {
		os.Remove(v.File)
		redfishError(w, http.StatusConflict, "ResourceInUse", "%v", err)
		return
	}
	s.log.Info("virtual media inserted", "machine", m.Name(), "image", v.Image, "bytes", v.Size)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) postEjectMedia(w http.ResponseWriter, r *http.Request, m *Machine) {
	if err := m.EjectMedia(); err != nil {
		redfishError(w, http.StatusInternalServerError, "InternalError", "%v", err)
		return
	}
	s.log.Info("virtual media ejected", "machine", m.Name())
	w.WriteHeader(http.StatusNoContent)
}
