//go:build !ballot_notls

package zookeeper

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// TestLoadAccessTLS: the TLS configuration LoadAccess makes of the files
// (checked here since package main's TestZKAccessFiles sees only what
// crosses): TLS 1.2 at least, the system's roots or the CA file's, the
// client certificate, the server name.
func TestLoadAccessTLS(t *testing.T) {
	dir := t.TempDir()
	caFile, certFile, keyFile := testCertFiles(t, dir)
	for _, tc := range []struct {
		name  string
		p     Params
		check func(t *testing.T, a *Access, cfg *tls.Config)
	}{
		{"TLS with the system's CAs", Params{TLS: true, ACL: ACLOpen}, func(t *testing.T, a *Access, cfg *tls.Config) {
			if cfg == nil || cfg.RootCAs != nil || cfg.MinVersion != tls.VersionTLS12 || len(cfg.Certificates) != 0 {
				t.Errorf("got %+v", cfg)
			}
		}},
		{"TLS with a CA, a client certificate, a server name", Params{TLS: true, TLSCA: caFile, TLSCert: certFile, TLSKey: keyFile,
			TLSServerName: "zk.example.com", ACL: ACLCreator}, func(t *testing.T, a *Access, cfg *tls.Config) {
			if cfg.RootCAs == nil || len(cfg.Certificates) != 1 || cfg.ServerName != "zk.example.com" ||
				!reflect.DeepEqual(a.ACL, zk.AuthACL(zk.PermAll)) {
				t.Errorf("got %+v", cfg)
			}
			// The keeper's copy: the same CA, certificate and name.
			ca, _ := os.ReadFile(caFile)
			if w := a.wire; !w.TLS || w.ServerName != "zk.example.com" || string(w.CA) != string(ca) ||
				!reflect.DeepEqual(w.cert.Certificate, cfg.Certificates[0].Certificate) {
				t.Errorf("the keeper's access: %+v", w)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.Source = func(name string) string { return "--" + name }
			tc.p.Usage = func(format string, a ...any) error { t.Fatalf(format, a...); return nil }
			a, err := LoadAccess(&tc.p)
			if err != nil {
				t.Fatal(err)
			}
			var cfg *tls.Config
			if a.tls != nil {
				cfg = a.tls.cfg
			}
			tc.check(t, a, cfg)
		})
	}
}

// testCertFiles writes a CA, and a client certificate it signed with its
// key, as PEM files in dir.
func testCertFiles(t *testing.T, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	caKey, key := newKey(), newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "ballot"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	certDER, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("cert.pem", "CERTIFICATE", certDER), write("key.pem", "PRIVATE KEY", keyDER)
}
