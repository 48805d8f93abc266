package main

// Throwaway certificates for the TLS tests, made at run time with the
// standard library into a test's temporary directory; nothing is committed.
//
//	pki := newTestPKI(t)                                   // a CA: pki.CAFile
//	cert, key := pki.issue(t, certSpec{cn: "ballot", client: true})
//	keystore := pki.keystore(t, certSpec{cn: "localhost", names: []string{"localhost", "127.0.0.1"}})

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

type testPKI struct {
	dir    string
	CAFile string // the CA certificate, PEM
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
}

// certSpec describes a certificate to issue.
type certSpec struct {
	cn      string
	names   []string // DNS names and IP addresses it is valid for
	client  bool     // for a client (else a server)
	expired bool     // valid only in the past
}

var testSerial atomic.Int64

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	key := testKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(testSerial.Add(1)),
		Subject:               pkix.Name{CommonName: "ballot test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p := &testPKI{dir: t.TempDir(), ca: ca, caKey: key}
	p.CAFile = filepath.Join(p.dir, "ca.pem")
	writePEM(t, p.CAFile, "CERTIFICATE", der)
	return p
}

func testKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t testing.TB, path string, blocks ...any) {
	t.Helper()
	var out []byte
	for i := 0; i < len(blocks); i += 2 {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: blocks[i].(string), Bytes: blocks[i+1].([]byte)})...)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (p *testPKI) make(t testing.TB, spec certSpec) (certDER, keyDER []byte) {
	t.Helper()
	key := testKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(testSerial.Add(1)),
		Subject:      pkix.Name{CommonName: spec.cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if spec.client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	if spec.expired {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	}
	for _, n := range spec.names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err = x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return certDER, keyDER
}

// issue writes a certificate and its key to two PEM files.
func (p *testPKI) issue(t testing.TB, spec certSpec) (certFile, keyFile string) {
	t.Helper()
	certDER, keyDER := p.make(t, spec)
	certFile = filepath.Join(p.dir, spec.cn+"-"+big.NewInt(testSerial.Add(1)).String()+".pem")
	keyFile = certFile[:len(certFile)-len(".pem")] + ".key"
	writePEM(t, certFile, "CERTIFICATE", certDER)
	writePEM(t, keyFile, "PRIVATE KEY", keyDER)
	return certFile, keyFile
}

// keystore writes a certificate and its key to one PEM file, as
// ZooKeeper's ssl.keyStore.type=PEM reads them.
func (p *testPKI) keystore(t testing.TB, spec certSpec) string {
	t.Helper()
	certDER, keyDER := p.make(t, spec)
	path := filepath.Join(p.dir, spec.cn+"-"+big.NewInt(testSerial.Add(1)).String()+"-keystore.pem")
	writePEM(t, path, "CERTIFICATE", certDER, "PRIVATE KEY", keyDER)
	return path
}
