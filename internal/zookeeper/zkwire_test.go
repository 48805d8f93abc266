package zookeeper

import (
	"reflect"
	"testing"
	"time"
)

// TestParseConnectReply: the connect response as ZooKeeper frames it, with
// and without the read-only flag; a truncated one is an error, not a
// session.
func TestParseConnectReply(t *testing.T) {
	frame := func(readOnly bool) []byte {
		var b wireBuf
		b.int32(0)    // protocol version
		b.int32(4007) // timeout, ms
		b.int64(0x1234abcd)
		b.buffer([]byte("0123456789abcdef"))
		if readOnly {
			b.bool(false)
		}
		return b.Bytes()
	}
	want := connectReply{sessionID: 0x1234abcd, timeout: 4007 * time.Millisecond, passwd: []byte("0123456789abcdef")}
	for _, ro := range []bool{false, true} {
		got, err := parseConnectReply(frame(ro))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("read-only flag %v: got %+v, %v; want %+v", ro, got, err, want)
		}
	}
	full := frame(false)
	for _, n := range []int{0, 4, 8, 16, len(full) - 1} {
		if got, err := parseConnectReply(full[:n]); err == nil {
			t.Errorf("%d of %d bytes: got %+v, want an error", n, len(full), got)
		}
	}
}
