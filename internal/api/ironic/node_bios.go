package ironic

import (
	"net/http"
)

// listBIOS is GET /v1/nodes/{node}/bios (1.40): ferro caches no BIOS
// settings, so the list is empty.
func (s *server) listBIOS(rq *request) error {
	if _, err := s.pathNodeSince(rq, v40BIOSInterface, "fields", "detail"); err != nil {
		return err
	}
	return rq.writeJSON(http.StatusOK, []byte(`{"bios": []}`))
}

// getBIOSSetting is GET /v1/nodes/{node}/bios/{setting} (1.40).
func (s *server) getBIOSSetting(rq *request) error {
	if rq.minor < v40BIOSInterface {
		return resourceNotFound()
	}
	n, err := s.node(rq)
	if err != nil {
		return err
	}
	return notFound("Node %s doesn't have a BIOS setting '%s'", n.UUID, rq.r.PathValue("setting"))
}
