//go:build ballot_notls

package zookeeper

// A ballot built without TLS (tag ballot_notls): 2.2 MiB smaller, for
// appliances with little flash. It refuses --zookeeper-tls* with one line;
// digest credentials and ACLs work as in every build.

import (
	"errors"
	"net"
	"time"
)

type tlsSettings struct{}

// clientCert is never set in a build without TLS.
type clientCert struct{}

// loadTLS refuses, naming the parameter that asked for TLS.
func (a *Access) loadTLS(p *Params) error {
	return p.Usage("%s: this ballot was built without TLS (tag ballot_notls); reach ZooKeeper over TLS with a standard build", p.TLSAskedBy)
}

func (t *tlsSettings) handshake(raw net.Conn, name, addr string, diag *zkDiag, limit time.Duration) (net.Conn, bool, error) {
	return nil, false, errors.New("built without TLS")
}

// speaksTLS cannot tell without TLS: the diagnosis stays generic.
func speaksTLS(addr, name string) bool { return false }

func (a WireAccess) dialTLS(d *net.Dialer, addr string) (net.Conn, error) {
	return nil, errors.New("built without TLS")
}

func encodeCert(c clientCert) (chain, key string) { return "-", "-" }

func decodeCert(chain, key string) (c clientCert, ok bool) { return c, false }
