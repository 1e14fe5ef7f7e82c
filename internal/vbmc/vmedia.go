package vbmc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"time"
)

// fetchImage downloads a virtual media image into the machine's directory,
// bounded by [Config]MaxImageMB and Options.FetchTimeout. The file is what
// the qemu backend attaches as the CD-ROM.
func (s *Server) fetchImage(ctx context.Context, m *Machine, image, user, password string) (VirtualMedia, error) {
	u, err := url.Parse(image)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return VirtualMedia{}, fmt.Errorf("image %q: not an http or https URL", redactURL(image))
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, image, nil)
	if err != nil {
		return VirtualMedia{}, fmt.Errorf("image %s: %w", redactURL(image), err)
	}
	if user != "" || password != "" {
		req.SetBasicAuth(user, password)
	}
	client := &http.Client{
		Transport: &http.Transport{
			// Redfish VirtualMedia reports VerifyCertificate=false: a lab
			// BMC takes whatever certificate the image server has.
			TLSClientConfig:       &tls.Config{InsecureSkipVerify: true},
			ResponseHeaderTimeout: 30 * time.Second,
			Proxy:                 http.ProxyFromEnvironment,
		},
	}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		return VirtualMedia{}, fmt.Errorf("fetch image %s: %w", redactURL(image), scrubURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return VirtualMedia{}, fmt.Errorf("fetch image %s: HTTP status %s", redactURL(image), resp.Status)
	}
	limit := int64(s.cfg.MaxImageMB) << 20
	if resp.ContentLength > limit {
		return VirtualMedia{}, fmt.Errorf("fetch image %s: %d bytes is more than max_image_mb (%d MiB)", redactURL(image), resp.ContentLength, s.cfg.MaxImageMB)
	}
	f, err := os.CreateTemp(m.dir, "cd-*.iso")
	if err != nil {
		return VirtualMedia{}, fmt.Errorf("store image: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("more than max_image_mb (%d MiB)", s.cfg.MaxImageMB)
	}
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("got %d of %d bytes", n, resp.ContentLength)
	}
	if err != nil {
		os.Remove(f.Name())
		return VirtualMedia{}, fmt.Errorf("fetch image %s: %w", redactURL(image), scrubURLError(err))
	}
	return VirtualMedia{Image: image, ImageName: path.Base(u.Path), File: f.Name(), Size: n}, nil
}

// redactURL drops a password written into a URL's user info.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// scrubURLError strips the URL (which may carry credentials) from a
// *url.Error; the caller names the redacted URL itself.
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
