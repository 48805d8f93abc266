//go:build race

package gronx

const raceEnabled = true
