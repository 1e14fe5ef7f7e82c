package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"

	"github.com/ferrometal/ferro/internal/openstack"
	"github.com/ferrometal/ferro/internal/testing/ferrotest"
)

// testCA is a throw-away certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate, PEM
}

func newCA(t *testing.T, dir string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ferro test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, file: filepath.Join(dir, "ca.pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue writes a server certificate for 127.0.0.1 with serial to certFile and keyFile.
func (ca *testCA) issue(t *testing.T, serial int64, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	// Write the key first and the certificate last, each by rename, so a
	// reload never sees half a file.
	writePEM(t, keyFile, "EC PRIVATE KEY", kb)
	writePEM(t, certFile, "CERTIFICATE", der)
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// servedSerial connects to addr trusting only ca and returns the serial of the certificate served.
func servedSerial(addr string, ca *testCA) (int64, error) {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
}

func TestTLS_BothListenersAndReloadOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir)
	certFile, keyFile := filepath.Join(dir, "ferro.pem"), filepath.Join(dir, "ferro.key")
	ca.issue(t, 100, certFile, keyFile)
	conf := writeConfig(t, fmt.Sprintf("[api]\nenable_ssl_api = true\n[ssl]\ncert_file = %s\nkey_file = %s\n", certFile, keyFile))
	srv := ferrotest.Start(t, ferrotest.WithConfig(conf), ferrotest.WithReadyCheck(func(ctx context.Context, s *ferrotest.Server) error {
		_, err := servedSerial("127.0.0.1:"+strconv.Itoa(s.Port), ca)
		return err
	}))
	apiAddr := "127.0.0.1:" + strconv.Itoa(srv.Port)
	inspectorAddr := strings.TrimPrefix(srv.InspectorURL, "http://")
	apiURL := "https://" + apiAddr

	// gophercloud, through ferro's outbound factory with [section]cafile.
	c, err := openstack.New(t.Context(), openstack.Options{Section: "[test]", AuthType: "none", ServiceType: "baremetal", Endpoint: apiURL + "/v1", CAFile: ca.file})
	if err != nil {
		t.Fatal(err)
	}
	c.Microversion = "1.82"
	if _, err := nodes.Create(t.Context(), c, nodes.CreateOpts{Driver: "fake-hardware", Name: "tls-1"}).Extract(); err != nil {
		t.Fatalf("create over TLS: %v", err)
	}
	// Without the CA the certificate is refused; insecure skips the check.
	if _, err := http.Get(apiURL + "/"); err == nil {
		t.Error("an untrusted certificate was accepted")
	}
	ic, err := openstack.New(t.Context(), openstack.Options{Section: "[test]", AuthType: "none", ServiceType: "baremetal", Endpoint: apiURL + "/v1", Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	ic.Microversion = "1.82"
	if _, err := nodes.Get(t.Context(), ic, "tls-1").Extract(); err != nil {
		t.Errorf("insecure=true: %v", err)
	}
	// Plain HTTP to the TLS port is not served.
	if resp, err := http.Get("http://" + apiAddr + "/v1/nodes"); err == nil {
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served on the TLS port")
		}
		resp.Body.Close()
	}
	// The inspector's own listener is TLS too.
	if s, err := servedSerial(inspectorAddr, ca); err != nil || s != 100 {
		t.Errorf("inspector listener: serial %d, %v", s, err)
	}

	// The baremetal CLI with --os-cacert, and without.
	if out, err := baremetalCLI(t, "--os-auth-type", "none", "--os-endpoint", apiURL, "--os-cacert", ca.file, "node", "show", "tls-1", "-f", "value", "-c", "name"); err != nil || strings.TrimSpace(out) != "tls-1" {
		t.Errorf("baremetal --os-cacert: %v\n%s", err, out)
	}
	if out, err := baremetalCLI(t, "--os-auth-type", "none", "--os-endpoint", apiURL, "node", "list"); err == nil {
		t.Errorf("baremetal without the CA succeeded:\n%s", out)
	}

	// A new certificate, then SIGHUP: both listeners serve it, without a restart.
	ca.issue(t, 200, certFile, keyFile)
	if err := srv.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{apiAddr, inspectorAddr} {
		end := time.Now().Add(30 * time.Second)
		for {
			s, err := servedSerial(addr, ca)
			if err == nil && s == 200 {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("%s still serves serial %d (%v) after SIGHUP", addr, s, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// A broken file on SIGHUP keeps the certificate in use.
	if err := os.WriteFile(certFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := srv.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitLog(t, srv, "certificate not reloaded")
	if s, err := servedSerial(apiAddr, ca); err != nil || s != 200 {
		t.Errorf("after a failed reload: serial %d, %v", s, err)
	}
}

// waitLog waits until the server's log contains s.
func waitLog(t *testing.T, srv *ferrotest.Server, s string) {
	t.Helper()
	end := time.Now().Add(30 * time.Second)
	for !strings.Contains(srv.Log(), s) {
		if time.Now().After(end) {
			t.Fatalf("the log never says %q", s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
