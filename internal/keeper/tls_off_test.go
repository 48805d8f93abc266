//go:build ballot_notls

package keeper

// tlsBuild: a build without TLS (ballot_notls) refuses certificates.
const tlsBuild = false
