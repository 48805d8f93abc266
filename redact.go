package main

// --debug shows each parameter's value; these are the secrets it hides.
// Credentials themselves are never parameters (--zookeeper-auth-file names
// a file, --leader-data @PATH a file: the name is shown, never the
// content), but a hook's command line or --leader-data may carry a URL
// with a password, or a password flag.

import (
	"regexp"
	"strings"
)

var (
	// scheme://user:password@ → scheme://user:xxxxx@ (as net/url's Redacted).
	urlPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/@\s:]*):[^/@\s]*@`)
	// --password VALUE, --api-token=VALUE, PASSWORD=VALUE, "secret": "VALUE" ...
	namedSecret = regexp.MustCompile(`(?i)([\w-]*(?:password|passwd|secret|token|credential)[\w-]*(?:"?\s*[=:]\s*"?|\s+|"\s*,\s*"))([^\s",\]]+)`)
)

// redactValue is v with the secrets it may hold replaced by xxxxx.
func redactValue(v string) string {
	v = urlPassword.ReplaceAllString(v, "${1}:xxxxx@")
	return namedSecret.ReplaceAllString(v, "${1}xxxxx")
}

// redactURL is a ping URL as ballot shows it: scheme and host only, the
// path (the secret: a check's uuid or a project's ping key) cut.
func redactURL(v string) string {
	u, err := parseWebURL(strings.TrimSpace(v))
	if err != nil || u.Host == "" || strings.ContainsAny(u.Host, "@") {
		return "…"
	}
	return u.Scheme + "://" + u.Host + "/…"
}
