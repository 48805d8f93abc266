//go:build !ballot_notls

package zookeeper

// TLS to ZooKeeper: everything that needs crypto/tls and crypto/x509, which
// add 2.2 MiB to the binary. A build with the tag ballot_notls leaves them
// out (tls_off.go) for appliances with little flash; it then refuses
// --zookeeper-tls with one line.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// tlsSettings is the client side of --zookeeper-tls*. Its ServerName is ""
// unless --zookeeper-tls-server-name: then each server's host as written.
type tlsSettings struct{ cfg *tls.Config }

// clientCert is a client certificate chain with its private key.
type clientCert = tls.Certificate

// loadTLS reads the CA bundle and the client certificate and key.
func (a *Access) loadTLS(p *Params) error {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: p.TLSServerName}
	a.wire.TLS, a.wire.ServerName = true, p.TLSServerName
	if p.TLSCA != "" {
		data, err := readCredentialFile(p, "zookeeper-tls-ca", p.TLSCA)
		if err != nil {
			return err
		}
		a.wire.CA = data
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(data) {
			return fileError(p, "zookeeper-tls-ca", p.TLSCA,
				"holds no PEM certificate; expected one or more -----BEGIN CERTIFICATE----- blocks")
		}
	}
	if p.TLSCert != "" {
		cert, err := loadClientCert(p)
		if err != nil {
			return err
		}
		cfg.Certificates = []tls.Certificate{cert}
		a.wire.cert = cert
		if leaf, err := x509.ParseCertificate(cert.Certificate[0]); err == nil && time.Now().After(leaf.NotAfter) {
			a.Warnings = append(a.Warnings, fmt.Sprintf("the client certificate %s expired on %s: servers that check it will refuse it",
				p.TLSCert, leaf.NotAfter.UTC().Format(time.RFC3339)))
		}
	}
	a.tls = &tlsSettings{cfg: cfg}
	return nil
}

// loadClientCert reads --zookeeper-tls-cert and --zookeeper-tls-key,
// blaming the right file for what is wrong.
func loadClientCert(p *Params) (tls.Certificate, error) {
	certPath, keyPath := p.TLSCert, p.TLSKey
	certPEM, err := readCredentialFile(p, "zookeeper-tls-cert", certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := readCredentialFile(p, "zookeeper-tls-key", keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	certs := 0
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return tls.Certificate{}, fileError(p, "zookeeper-tls-cert", certPath, "cannot parse its certificate: "+err.Error())
		}
		certs++
	}
	if certs == 0 {
		return tls.Certificate{}, fileError(p, "zookeeper-tls-cert", certPath,
			"holds no PEM certificate; expected a -----BEGIN CERTIFICATE----- block")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if !hasPrivateKeyBlock(keyPEM) {
			return tls.Certificate{}, fileError(p, "zookeeper-tls-key", keyPath,
				"holds no PEM private key; expected a -----BEGIN PRIVATE KEY----- block (or RSA/EC PRIVATE KEY)")
		}
		return tls.Certificate{}, fileError(p, "zookeeper-tls-key", keyPath,
			fmt.Sprintf("is not the private key of the certificate in %s: %s", certPath, strings.TrimPrefix(err.Error(), "tls: ")))
	}
	return cert, nil
}

func hasPrivateKeyBlock(data []byte) bool {
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return false
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			return true
		}
	}
}

// handshake runs the TLS handshake on raw within limit; cert reports that
// a client certificate was offered.
func (t *tlsSettings) handshake(raw net.Conn, name, addr string, diag *zkDiag, limit time.Duration) (conn net.Conn, cert bool, err error) {
	cfg := t.cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = name
	}
	tc := tls.Client(raw, cfg)
	_ = tc.SetDeadline(time.Now().Add(limit))
	if err := tc.Handshake(); err != nil {
		diag.handshakeFailed(addr, cfg, err, limit)
		return nil, false, err
	}
	_ = tc.SetDeadline(time.Time{})
	return tc, len(cfg.Certificates) > 0, nil
}

// handshakeFailed explains a failed TLS handshake.
func (d *zkDiag) handshakeFailed(addr string, cfg *tls.Config, err error, limit time.Duration) {
	var (
		verr *tls.CertificateVerificationError
		rerr tls.RecordHeaderError
		ne   net.Error
	)
	switch {
	case errors.As(err, &verr):
		d.note(addr, fmt.Sprintf("%s: its certificate does not verify for the name %s: %v%s", addr, cfg.ServerName, verr.Err, certHint(verr.Err)))
	case isRemoteAlert(err):
		d.note(addr, fmt.Sprintf("%s refused the TLS handshake: %v%s", addr, err, alertHint(err, len(cfg.Certificates) > 0)))
	case errors.As(err, &rerr):
		d.note(addr, addr+" answered the TLS handshake in plain text: it does not speak TLS on this port (a plain clientPort? use the servers' secureClientPort, or drop --zookeeper-tls)")
	case errors.As(err, &ne) && ne.Timeout():
		d.note(addr, fmt.Sprintf("%s: no TLS handshake within %s", addr, limit))
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || isConnReset(err):
		d.note(addr, addr+" closed the connection during the TLS handshake")
		d.probeOnce(addr, func() string {
			if speaksPlainZooKeeper(addr) {
				return addr + " does not speak TLS on this port: it answers in plain text (a plain clientPort? use the servers' secureClientPort, or drop --zookeeper-tls)"
			}
			return ""
		})
	default:
		d.note(addr, fmt.Sprintf("%s: TLS handshake failed: %v", addr, err))
	}
}

func certHint(err error) string {
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &unknown):
		return " (check --zookeeper-tls-ca: it must hold the CA that signed the server's certificate)"
	case errors.As(err, &hostname):
		return " (check the host names in --zookeeper-servers, or --zookeeper-tls-server-name)"
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return " (the server's certificate must be renewed)"
	}
	return ""
}

// speaksTLS reports whether the server at addr completes (or gets far
// enough into) a TLS handshake: it answers TLS with a certificate, even
// one this host does not trust, or with a TLS alert.
func speaksTLS(addr, name string) bool {
	raw, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err != nil {
		return false
	}
	defer raw.Close()
	tc := tls.Client(raw, &tls.Config{ServerName: name, MinVersion: tls.VersionTLS12})
	_ = tc.SetDeadline(time.Now().Add(probeTimeout))
	err = tc.Handshake()
	var verr *tls.CertificateVerificationError
	return err == nil || errors.As(err, &verr) || isRemoteAlert(err)
}

// dialTLS is WireAccess.dial with TLS: the same verification as ballot's.
func (a WireAccess) dialTLS(d *net.Dialer, addr string) (net.Conn, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: a.ServerName}
	if cfg.ServerName == "" {
		cfg.ServerName, _, _ = net.SplitHostPort(addr)
	}
	if a.CA != nil {
		cfg.RootCAs = x509.NewCertPool()
		cfg.RootCAs.AppendCertsFromPEM(a.CA)
	}
	if len(a.cert.Certificate) > 0 {
		cfg.Certificates = []tls.Certificate{a.cert}
	}
	return tls.DialWithDialer(d, "tcp", addr, cfg)
}

// encodeCert spells a client certificate for the keeper's pipe: the
// chain's certificates (DER) in hex, comma-separated, and the key (PKCS #8)
// in hex; "-" for none.
func encodeCert(c clientCert) (chain, key string) {
	if len(c.Certificate) == 0 {
		return "-", "-"
	}
	k, err := x509.MarshalPKCS8PrivateKey(c.PrivateKey)
	if err != nil {
		return "-", "-"
	}
	parts := make([]string, len(c.Certificate))
	for i, der := range c.Certificate {
		parts[i] = hex.EncodeToString(der)
	}
	return strings.Join(parts, ","), hex.EncodeToString(k)
}

// decodeCert reads what encodeCert wrote.
func decodeCert(chain, key string) (c clientCert, ok bool) {
	for _, h := range strings.Split(chain, ",") {
		der, err := hex.DecodeString(h)
		if err != nil {
			return c, false
		}
		c.Certificate = append(c.Certificate, der)
	}
	k, err := hex.DecodeString(key)
	if err != nil {
		return c, false
	}
	if c.PrivateKey, err = x509.ParsePKCS8PrivateKey(k); err != nil {
		return c, false
	}
	return c, true
}
