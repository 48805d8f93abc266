package main

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"

	"ballot/internal/zookeeper"
)

// TestZKAccessFiles reads certificate, key and auth files the way ballot
// does before it connects: every bad file is a one-line usage error naming
// the parameter (with its source) and the file, and never quoting a
// secret. A good one shows in what crosses (Describe, ACL); the TLS
// configuration and the digest it makes are checked where they live,
// internal/zookeeper's TestLoadAccess and TestLoadAccessTLS.
func TestZKAccessFiles(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(t, certSpec{cn: "ballot", client: true})
	_, otherKey := pki.issue(t, certSpec{cn: "other", client: true})
	expiredCert, expiredKey := pki.issue(t, certSpec{cn: "old", client: true, expired: true})
	certPEM, _ := os.ReadFile(cert)
	keyPEM, _ := os.ReadFile(key)
	const secret = "s3cr3t:with:colons"

	tests := []struct {
		name    string
		files   map[string]string // name → content, in $DIR, mode 0600
		modes   map[string]os.FileMode
		set     Settings // $DIR in file names is expanded; "$CERT" etc. are the issued files
		sources map[string]string
		want    []string // substrings of the error; nil: no error
		warn    []string // substrings of the warnings, in order
		check   func(t *testing.T, a *zookeeper.Access)
	}{
		{name: "plain, no credentials", set: Settings{ZooKeeperACL: aclOpen},
			check: func(t *testing.T, a *zookeeper.Access) {
				if a.Describe() != nil || !reflect.DeepEqual(a.ACL, zk.WorldACL(zk.PermAll)) {
					t.Errorf("got %+v", a)
				}
			}},
		{name: "TLS with the system's CAs", set: Settings{ZooKeeperTLS: true, ZooKeeperACL: aclOpen},
			check: func(t *testing.T, a *zookeeper.Access) {
				if got, want := a.Describe(), []any{"zookeeper_tls", true, "zookeeper_acl", aclOpen}; !reflect.DeepEqual(got, want) {
					t.Errorf("got %v, want %v", got, want)
				}
			}},
		{name: "TLS with a CA, a client certificate, a server name", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCA: "$CA",
			ZooKeeperTLSCert: "$CERT", ZooKeeperTLSKey: "$KEY", ZooKeeperTLSServerName: "zk.example.com", ZooKeeperACL: aclCreator},
			check: func(t *testing.T, a *zookeeper.Access) {
				if got, want := a.Describe(), []any{"zookeeper_tls", true, "zookeeper_acl", aclCreator}; !reflect.DeepEqual(got, want) ||
					!reflect.DeepEqual(a.ACL, zk.AuthACL(zk.PermAll)) {
					t.Errorf("got %v %v, want %v", got, a.ACL, want)
				}
			}},
		{name: "CA missing", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCA: "$DIR/none.pem"},
			want: []string{`--zookeeper-tls-ca "$DIR/none.pem": no such file`}},
		{name: "CA is a directory", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCA: "$DIR"},
			sources: map[string]string{"zookeeper-tls-ca": "environment BALLOT_ZOOKEEPER_TLS_CA"},
			want:    []string{`environment BALLOT_ZOOKEEPER_TLS_CA "$DIR": is a directory`}},
		{name: "CA not PEM", files: map[string]string{"ca.pem": "not a certificate\n"},
			set:     Settings{ZooKeeperTLS: true, ZooKeeperTLSCA: "$DIR/ca.pem"},
			sources: map[string]string{"zookeeper-tls-ca": "config file /etc/ballot.json"},
			want:    []string{`config file /etc/ballot.json: key "zookeeper-tls-ca" "$DIR/ca.pem": holds no PEM certificate`}},
		{name: "CA holds only a key", files: map[string]string{"ca.pem": string(keyPEM)},
			set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCA: "$DIR/ca.pem"}, want: []string{`"$DIR/ca.pem": holds no PEM certificate`}},
		{name: "certificate missing", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$DIR/c.pem", ZooKeeperTLSKey: "$KEY"},
			want: []string{`--zookeeper-tls-cert "$DIR/c.pem": no such file`}},
		{name: "key missing", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$CERT", ZooKeeperTLSKey: "$DIR/k.pem"},
			want: []string{`--zookeeper-tls-key "$DIR/k.pem": no such file`}},
		{name: "certificate file holds a key", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$KEY", ZooKeeperTLSKey: "$KEY"},
			want: []string{`--zookeeper-tls-cert "$KEY": holds no PEM certificate`}},
		{name: "certificate file corrupt",
			files: map[string]string{"c.pem": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"},
			set:   Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$DIR/c.pem", ZooKeeperTLSKey: "$KEY"},
			want:  []string{`--zookeeper-tls-cert "$DIR/c.pem": cannot parse its certificate`}},
		{name: "key file holds a certificate", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$CERT", ZooKeeperTLSKey: "$CERT"},
			want: []string{`--zookeeper-tls-key "$CERT": holds no PEM private key`}},
		{name: "key of another certificate", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$CERT", ZooKeeperTLSKey: "$OTHERKEY"},
			want: []string{`--zookeeper-tls-key "$OTHERKEY": is not the private key of the certificate in $CERT`}},
		{name: "expired client certificate: a warning", set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$EXPCERT", ZooKeeperTLSKey: "$EXPKEY"},
			warn: []string{"the client certificate $EXPCERT expired on"}},
		{name: "cert and key in one file", files: map[string]string{"both.pem": string(certPEM) + string(keyPEM)},
			set: Settings{ZooKeeperTLS: true, ZooKeeperTLSCert: "$DIR/both.pem", ZooKeeperTLSKey: "$DIR/both.pem"}},

		{name: "auth file", files: map[string]string{"auth": "alice:" + secret + "\n"},
			set: Settings{ZooKeeperTLS: true, ZooKeeperAuthFile: "$DIR/auth", ZooKeeperACL: aclCreatorWorldRead},
			check: func(t *testing.T, a *zookeeper.Access) {
				want := append(zk.AuthACL(zk.PermAll), zk.WorldACL(zk.PermRead)...)
				d := []any{"zookeeper_tls", true, "zookeeper_user", "alice", "zookeeper_acl", aclCreatorWorldRead}
				if !reflect.DeepEqual(a.Describe(), d) || !reflect.DeepEqual(a.ACL, want) {
					t.Errorf("got %v %v", a.Describe(), a.ACL)
				}
			}},
		{name: "auth file with CRLF, without TLS: a warning", files: map[string]string{"auth": "alice:" + secret + "\r\n"},
			set:  Settings{ZooKeeperAuthFile: "$DIR/auth"},
			warn: []string{"clear text"},
			check: func(t *testing.T, a *zookeeper.Access) {
				if got, want := a.Describe(), []any{"zookeeper_tls", false, "zookeeper_user", "alice", "zookeeper_acl", aclOpen}; !reflect.DeepEqual(got, want) {
					t.Errorf("got %v, want %v", got, want)
				}
			}},
		{name: "auth file readable by others: a warning", files: map[string]string{"auth": "alice:" + secret},
			modes: map[string]os.FileMode{"auth": 0o644}, set: Settings{ZooKeeperTLS: true, ZooKeeperAuthFile: "$DIR/auth"},
			warn: []string{"the auth file $DIR/auth is readable by its group or by others (mode 0644)", "chmod 600"}},
		{name: "auth file readable by its group: a warning", files: map[string]string{"auth": "alice:" + secret},
			modes: map[string]os.FileMode{"auth": 0o640}, set: Settings{ZooKeeperTLS: true, ZooKeeperAuthFile: "$DIR/auth"},
			warn: []string{"(mode 0640)"}},
		{name: "auth file missing", set: Settings{ZooKeeperAuthFile: "$DIR/auth"},
			want: []string{`--zookeeper-auth-file "$DIR/auth": no such file`}},
		{name: "credentials given instead of a file", set: Settings{ZooKeeperAuthFile: "alice:" + secret},
			want: []string{"--zookeeper-auth-file: no such file", "never the credentials themselves"}},
		{name: "auth file empty", files: map[string]string{"auth": "\n"}, set: Settings{ZooKeeperAuthFile: "$DIR/auth"},
			sources: map[string]string{"zookeeper-auth-file": "environment BALLOT_ZOOKEEPER_AUTH_FILE"},
			want:    []string{`environment BALLOT_ZOOKEEPER_AUTH_FILE "$DIR/auth": is empty; expected one line user:password`}},
		{name: "auth file without colon", files: map[string]string{"auth": "alice-secret"}, set: Settings{ZooKeeperAuthFile: "$DIR/auth"},
			want: []string{`"$DIR/auth": has no colon`}},
		{name: "auth file without user", files: map[string]string{"auth": ":" + secret}, set: Settings{ZooKeeperAuthFile: "$DIR/auth"},
			want: []string{`"$DIR/auth": has no user name`}},
		{name: "auth file without password", files: map[string]string{"auth": "alice:\n"}, set: Settings{ZooKeeperAuthFile: "$DIR/auth"},
			want: []string{`"$DIR/auth": has no password`}},
		{name: "auth file of two lines", files: map[string]string{"auth": "alice:" + secret + "\nbob:" + secret + "\n"},
			set: Settings{ZooKeeperAuthFile: "$DIR/auth"}, want: []string{`"$DIR/auth": holds more than one line`}},
		{name: "auth file with a control character", files: map[string]string{"auth": "alice:" + secret + "\x00"},
			set: Settings{ZooKeeperAuthFile: "$DIR/auth"}, want: []string{`"$DIR/auth": contains a control character`}},
		{name: "auth file is a directory", set: Settings{ZooKeeperAuthFile: "$DIR"}, want: []string{`"$DIR": is a directory`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			expand := strings.NewReplacer("$DIR", dir, "$CA", pki.CAFile, "$CERT", cert, "$KEY", key, "$OTHERKEY", otherKey,
				"$EXPCERT", expiredCert, "$EXPKEY", expiredKey).Replace
			for name, content := range tt.files {
				mode := os.FileMode(0o600)
				if m, ok := tt.modes[name]; ok {
					mode = m
				}
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(content), mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, mode); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			set := tt.set
			for _, f := range []*string{&set.ZooKeeperTLSCA, &set.ZooKeeperTLSCert, &set.ZooKeeperTLSKey, &set.ZooKeeperAuthFile} {
				*f = expand(*f)
			}
			if set.ZooKeeperACL == "" {
				set.ZooKeeperACL = aclOpen
			}
			set.Sources = map[string]string{}
			for k, v := range tt.sources {
				set.Sources[k] = v
			}
			a, err := loadZKAccess(&set)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if len(a.Warnings) > 0 && len(tt.warn) == 0 {
					t.Errorf("unexpected warnings %q", a.Warnings)
				}
				for _, w := range tt.warn {
					if !strings.Contains(strings.Join(a.Warnings, "\n"), expand(w)) {
						t.Errorf("warnings %q lack %q", a.Warnings, expand(w))
					}
				}
				for _, w := range a.Warnings {
					if strings.Contains(w, secret) {
						t.Errorf("a warning quotes the secret: %q", w)
					}
				}
				if tt.check != nil {
					tt.check(t, a)
				}
				return
			}
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v (%T), want a usage error", err, err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, expand(w)) {
					t.Errorf("message %q lacks %q", msg, expand(w))
				}
			}
			if strings.Contains(msg, secret) || strings.ContainsAny(msg, "\n\r") {
				t.Errorf("message quotes the secret or is not one line: %q", msg)
			}
		})
	}
}
