package keeper

import (
	"os"
	"slices"
	"testing"
)

// TestStartPageRanges: only the executable's read-only mappings (its text
// and rodata) are dropped, never its writable data, another file's or an
// anonymous mapping.
func TestStartPageRanges(t *testing.T) {
	const exe = "/usr/bin/ballot"
	maps := `00400000-00724000 r-xp 00000000 fe:00 1234 /usr/bin/ballot
00724000-00a33000 r--p 00324000 fe:00 1234 /usr/bin/ballot
00a33000-00a71000 rw-p 00633000 fe:00 1234 /usr/bin/ballot
00a71000-00aa0000 rw-p 00000000 00:00 0
c000000000-c000400000 rw-p 00000000 00:00 0
7f0000000000-7f0000001000 r--p 00000000 fe:00 99 /usr/lib/other
7f0000001000-7f0000002000 r-xp 00000000 fe:00 99 /usr/bin/ballot (deleted)
7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]
zz-00000001 r-xp 00000000 fe:00 1234 /usr/bin/ballot
00000002-00000001 r-xp 00000000 fe:00 1234 /usr/bin/ballot
`
	want := [][2]uint64{{0x400000, 0x724000}, {0x724000, 0xa33000}}
	if got := startPageRanges(maps, exe); !slices.Equal(got, want) {
		t.Errorf("ranges %x, want %x", got, want)
	}
}

// TestDropStartPages: the process goes on after its start-up pages are
// dropped (they come back from the page cache when touched), its data
// intact.
func TestDropStartPages(t *testing.T) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	if len(startPageRanges(string(maps), exe)) == 0 {
		t.Fatalf("no read-only mapping of %s in this process's maps:\n%s", exe, maps)
	}
	before := prSetChildSubreaper
	data := []string{"kept"}
	DropStartPages()
	if prSetChildSubreaper != before || data[0] != "kept" || len(startPageRanges(string(maps), exe)) == 0 {
		t.Fatal("the process's data changed")
	}
}
