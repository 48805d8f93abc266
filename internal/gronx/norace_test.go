//go:build !race

package gronx

const raceEnabled = false
