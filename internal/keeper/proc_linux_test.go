package keeper

import (
	"fmt"
	"os"
	"runtime"
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
	// What reads the read-only pages: a collection (type and stack
	// tables), formatting by reflection, a map of interfaces.
	runtime.GC()
	m := map[any]any{"k": data, 1: struct{ A []string }{data}}
	if prSetChildSubreaper != before || data[0] != "kept" || len(startPageRanges(string(maps), exe)) == 0 ||
		fmt.Sprint(m["k"], m[1]) != "[kept] {[kept]}" {
		t.Fatal("the process's data changed")
	}
}

// elfHead builds an ELF header with program headers of the given types.
func elfHead(class, data byte, etype uint16, phTypes ...uint32) []byte {
	o := elfOrder{big: data == 2}
	put16 := func(b []byte, v uint16) {
		if o.big {
			b[0], b[1] = byte(v>>8), byte(v)
		} else {
			b[0], b[1] = byte(v), byte(v>>8)
		}
	}
	put32 := func(b []byte, v uint32) {
		for i := range 4 {
			if o.big {
				b[3-i] = byte(v >> (8 * i))
			} else {
				b[i] = byte(v >> (8 * i))
			}
		}
	}
	ehsize, phentsize := 64, 56
	if class == 1 {
		ehsize, phentsize = 52, 32
	}
	b := make([]byte, ehsize+len(phTypes)*phentsize)
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = class, data, 1
	put16(b[16:], etype)
	if class == 1 {
		put32(b[28:], uint32(ehsize))
		put16(b[42:], uint16(phentsize))
		put16(b[44:], uint16(len(phTypes)))
	} else {
		if o.big { // e_phoff, 8 bytes: its low half is the last four
			put32(b[36:], uint32(ehsize))
		} else {
			put32(b[32:], uint32(ehsize))
		}
		put16(b[54:], uint16(phentsize))
		put16(b[56:], uint16(len(phTypes)))
	}
	for i, pt := range phTypes {
		put32(b[ehsize+i*phentsize:], pt)
	}
	return b
}

// TestPagesDroppable: only a fixed-address executable without a RELRO
// segment has its read-only pages dropped; a position-independent one
// (-buildmode=pie: the loader relocates pointers in pages it then makes
// read-only) or anything not understood keeps them: dropped, a PIE ballot
// crashed at the next access (the review of issue 34).
func TestPagesDroppable(t *testing.T) {
	const load, note, relro, stack = 1, 4, 0x6474e552, 0x6474e551
	for _, tc := range []struct {
		name string
		head []byte
		want bool
	}{
		{"ELF64 little-endian executable (amd64, arm64, riscv64)", elfHead(2, 1, 2, 6, load, load, note, stack), true},
		{"ELF32 little-endian executable (386, arm, mipsle)", elfHead(1, 1, 2, load, load, stack), true},
		{"ELF32 big-endian executable (mips)", elfHead(1, 2, 2, load, load, stack), true},
		{"ELF64 big-endian executable", elfHead(2, 2, 2, load, stack), true},
		{"position-independent (ET_DYN)", elfHead(2, 1, 3, load, load, relro), false},
		{"an executable with a RELRO segment", elfHead(2, 1, 2, load, relro), false},
		{"big-endian with RELRO", elfHead(1, 2, 2, load, relro), false},
		{"program headers past what was read", elfHead(2, 1, 2, load, load)[:64+56], false},
		{"not ELF", []byte("#!/bin/sh\nexec ballot \"$@\"\n" + string(make([]byte, 64))), false},
		{"empty", nil, false},
	} {
		if got := pagesDroppable(tc.head); got != tc.want {
			t.Errorf("%s: droppable %v, want %v", tc.name, got, tc.want)
		}
	}
	// This test's own executable: droppable as ballot's builds are, not
	// under -buildmode=pie (go test -buildmode=pie, as a packager builds).
	head := readHead("/proc/self/exe")
	pie := len(head) > 17 && head[16] == 3 // ET_DYN, little-endian
	if got := pagesDroppable(head); got == pie {
		t.Errorf("this test's own executable (%s, position-independent %v): droppable %v", runtime.GOARCH, pie, got)
	}
}
