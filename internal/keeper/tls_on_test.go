//go:build !ballot_notls

package keeper

// tlsBuild: this build carries client certificates to the keeper.
const tlsBuild = true
