//go:build ballot_notls

package main

// A ballot built without TLS (tag ballot_notls): no https ping either
// (pingtls_on.go).

import (
	"errors"
	"net"
)

const tlsBuilt = false

type pingTLSConfig struct{}

// loadPingTLS cannot: an https ping URL is refused before (parsePingURL).
func loadPingTLS(file string) (*pingTLSConfig, error) {
	return nil, errors.New("this ballot was built without TLS (tag ballot_notls)")
}

func pingTLS(conn net.Conn, name string, tc *pingTLSConfig) (net.Conn, error) {
	return conn, errors.New("built without TLS")
}
