package ironic

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/ferrometal/ferro/internal/driver"
)

// vmediaURLSchemes are the image URL schemes Ironic accepts
// (image_publisher.VMEDIA_SUPPORTED_URL_SCHEMES).
var vmediaURLSchemes = []string{"http", "https", "nfs", "cifs", "smb"}

// vmediaDownloadSources are image_download_source's values.
var vmediaDownloadSources = []string{"http", "local", "swift"}

// getVmedia is GET /v1/nodes/{node}/vmedia (1.93): the devices as the
// management interface reports them, a bare list.
func (s *server) getVmedia(rq *request) error {
	n, err := s.pathNodeSince(rq, v93GetVmedia)
	if err != nil {
		return err
	}
	devs, err := s.cond.GetVirtualMedia(rq.ctx(), n.UUID)
	if err != nil {
		return s.nodeActionError(err, n.UUID)
	}
	b := append(make([]byte, 0, 64+128*len(devs)), '[')
	for i, d := range devs {
		if i > 0 {
			b = append(b, ", "...)
		}
		o := newObj(b)
		o.key("media_types")
		o.b = appendStrings(o.b, append([]string{}, d.MediaTypes...))
		o.boolean("inserted", d.Inserted)
		o.nullStr("image", d.Image)
		b = o.end()
	}
	return rq.writeJSON(http.StatusOK, append(b, ']'))
}

// attachVmedia is POST /v1/nodes/{node}/vmedia (1.89), with Ironic's
// VMEDIA_ATTACH_VALIDATOR schema.
func (s *server) attachVmedia(rq *request) error {
	if rq.minor < v89AttachDetachVmedia {
		return resourceNotFound()
	}
	body, err := rq.createBody("vmedia")
	if err != nil {
		return err
	}
	if err := checkAdditional("vmedia", body, func(k string) bool {
		return k == "device_type" || k == "image_url" || k == "image_download_source"
	}); err != nil {
		return err
	}
	for _, k := range []string{"device_type", "image_url"} {
		if _, ok := body[k]; !ok {
			return schemaError("vmedia", "'%s' is a required property", k)
		}
	}
	for _, k := range []string{"device_type", "image_url", "image_download_source"} {
		v, given := body[k]
		if !given {
			continue
		}
		str, ok := v.(string)
		if !ok {
			return schemaError("vmedia", "%s is not of type 'string'", pyRepr(v))
		}
		if enum := map[string][]string{"device_type": driver.VMediaDevices, "image_download_source": vmediaDownloadSources}[k]; enum != nil && !slices.Contains(enum, str) {
			return schemaError("vmedia", "%s is not one of %s", pyRepr(str), pyRepr(anySlice(enum)))
		}
	}
	image := body["image_url"].(string)
	scheme := ""
	if u, err := url.Parse(image); err == nil {
		scheme = strings.ToLower(u.Scheme)
	}
	if !slices.Contains(vmediaURLSchemes, scheme) {
		return badRequest("Unsupported or missing URL scheme: %s", scheme)
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if err := s.cond.AttachVirtualMedia(rq.ctx(), n.UUID, body["device_type"].(string), image); err != nil {
		return s.nodeActionError(err, n.UUID)
	}
	return rq.writeEmpty(http.StatusNoContent)
}

// detachVmedia is DELETE /v1/nodes/{node}/vmedia (1.89): every device, or
// those of ?device_types=.
func (s *server) detachVmedia(rq *request) error {
	if rq.minor < v89AttachDetachVmedia {
		return resourceNotFound()
	}
	a, err := rq.queryArgs("device_types")
	if err != nil {
		return err
	}
	types := a.stringList("device_types")
	var invalid []string
	for _, t := range types {
		if !slices.Contains(driver.VMediaDevices, t) {
			invalid = append(invalid, t)
		}
	}
	if len(invalid) > 0 {
		return badRequest("Invalid device type(s) %s (valid are %s)", strings.Join(invalid, ", "), strings.Join(driver.VMediaDevices, ", "))
	}
	if len(types) == 0 {
		types = nil // Ironic's "if device_types": none given is all
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	if err := s.cond.DetachVirtualMedia(rq.ctx(), n.UUID, types); err != nil {
		return s.nodeActionError(err, n.UUID)
	}
	return rq.writeEmpty(http.StatusNoContent)
}
