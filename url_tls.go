//go:build !ballot_notls

package main

import "net/url"

// With TLS, crypto/x509 links net/url anyway: a URL is url.Parse's.
type webURL = url.URL

func parseWebURL(raw string) (*webURL, error) { return url.Parse(raw) }
