//go:build !ballot_notls

package main

// The health check's https ping: crypto/tls, left out with the tag
// ballot_notls (pingtls_off.go), like TLS to ZooKeeper
// (internal/zookeeper/tls_on.go).

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
)

// tlsBuilt: this ballot can reach ZooKeeper over TLS.
const tlsBuilt = true

// pingTLSConfig is what an https ping checks the server against: nil
// roots are the system's, which Go reads from SSL_CERT_FILE and
// SSL_CERT_DIR when they are set.
type pingTLSConfig struct{ roots *x509.CertPool }

// loadPingTLS reads --ping-ca ("": the system's CAs).
func loadPingTLS(file string) (*pingTLSConfig, error) {
	if file == "" {
		return &pingTLSConfig{}, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %v", errors.Unwrap(err))
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("holds no PEM certificate")
	}
	return &pingTLSConfig{roots: pool}, nil
}

// pingTLS is conn after a TLS handshake with the ping server name (the
// connection's deadline bounds it).
func pingTLS(conn net.Conn, name string, tc *pingTLSConfig) (net.Conn, error) {
	c := tls.Client(conn, &tls.Config{ServerName: name, RootCAs: tc.roots, MinVersion: tls.VersionTLS12})
	if err := c.Handshake(); err != nil {
		return conn, err
	}
	return c, nil
}
