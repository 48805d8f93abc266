package zookeeper

import (
	"math"
	"testing"
)

// TestSessionHexIsUnsigned: session ids print as ZooKeeper prints them,
// also those with the top bit set (servers with myid 128 and more), which
// must not print with a minus.
func TestSessionHexIsUnsigned(t *testing.T) {
	var high uint64 = 200<<56 | 0x5458f80001 // a session of the server with myid 200
	myid200 := int64(high)
	for _, tc := range []struct {
		id   int64
		want string
	}{
		{0, "0x0"}, // info: not ephemeral
		{0x100005458f80000, "0x100005458f80000"},
		{math.MaxInt64, "0x7fffffffffffffff"},
		{-1, "0xffffffffffffffff"},
		{math.MinInt64, "0x8000000000000000"},
		{myid200, "0xc800005458f80001"},
	} {
		if got := SessionHex(tc.id); got != tc.want {
			t.Errorf("sessionHex(%d) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
