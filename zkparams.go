package main

// The ZooKeeper layer (internal/zookeeper) takes its parameters from the
// settings here, with ballot's words for them: a bad file names the
// parameter as the user gave it and exits 2, and a session's log lines
// carry ballot's events.

import (
	"strings"

	"ballot/internal/zookeeper"
)

// loadZKAccess reads the certificate, key and auth files. Every problem
// with them is a *usageError naming the parameter and the file: ballot
// exits 2 before anything connects.
func loadZKAccess(set *Settings) (*zookeeper.Access, error) {
	asked := paramSource(set, "zookeeper-tls")
	if src, ok := strings.CutPrefix(set.Sources["zookeeper-tls"], "implied by "); ok {
		asked = src
	}
	return zookeeper.LoadAccess(&zookeeper.Params{
		Servers:       set.ZooKeeperServers,
		ACL:           set.ZooKeeperACL,
		TLS:           set.ZooKeeperTLS,
		TLSCA:         set.ZooKeeperTLSCA,
		TLSCert:       set.ZooKeeperTLSCert,
		TLSKey:        set.ZooKeeperTLSKey,
		TLSServerName: set.ZooKeeperTLSServerName,
		AuthFile:      set.ZooKeeperAuthFile,
		Events:        zookeeper.Events{Disconnected: logEvDisconnected.attr(), Reconnected: logEvReconnected.attr()},
		Source:        func(name string) string { return paramSource(set, name) },
		TLSAskedBy:    asked,
		Usage:         usagef,
	})
}
