//go:build ballot_notls

package main

// Without TLS nothing else links net/url: a URL is stdlite.go's parse.
type webURL = liteURL

func parseWebURL(raw string) (*webURL, error) { return parseURLLite(raw) }
