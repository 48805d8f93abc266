package keeper

// Process supervision that only Linux offers: a child subreaper, a signal
// on the parent's death, /proc. proc_other.go has the stand-ins that let
// other systems compile ballot (for editors and vet), which then refuses
// to run there.

import (
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER of prctl(2) (linux/prctl.h,
// the same number on every architecture; Linux 3.4 and later). The syscall
// package names SYS_PRCTL but not its options.
const prSetChildSubreaper = 36

// becomeSubreaper makes the calling process (the keeper) the one that
// orphaned descendants are reparented to, even those that called setsid,
// so it can find and kill all of them. On a kernel without it, the
// command's process group is still ended.
func becomeSubreaper() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// NewGroupAttr starts a process in a process group of its own, which gets
// deathSig when the thread that started it exits.
func NewGroupAttr(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
}

// unreadBytes is how many bytes wait in the pipe fd (FIONREAD, which the
// syscall package names TIOCINQ, per architecture).
func unreadBytes(fd uintptr) int {
	var n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n))); e != 0 {
		return 0
	}
	return int(n)
}

type procEntry struct{ pid, ppid int }

// listProcs reads pid and parent pid of every live (not zombie) process.
func listProcs() []procEntry {
	// Readdirnames and a sort, not os.ReadDir: the same names in the same
	// order without os.ReadDir's DirEntry sort (16 KiB of binary, issue 35).
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] }) // not slices.Sort, whose generic pdqsort for strings costs ~12 KB (issue 35)
	var out []procEntry
	for _, name := range names {
		p, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		out = append(out, procEntry{p, pp})
	}
	return out
}

// DropStartPages unmaps this process's pages of its own executable's code
// and read-only data (its text and rodata segments, never the writable
// one): what start-up touched (every package's init, the parameter table,
// the set-up) and an idle keeper, or a ballot at rest (restmem.go), does
// not touch again (issue 34: an idle keeper mapped 5–6 MB of the binary,
// counted again in the host's RSS beside ballot's). The pages stay in the
// page cache; a later access maps its page again (a minor fault, as at
// start, with the kernel's fault-around of 64 KiB).
// MADV_DONTNEED loses nothing on a read-only private file mapping: none of
// its pages was written, so none is a private copy.
func DropStartPages() {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return
	}
	if !pagesDroppable(readHead("/proc/self/exe")) {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return
	}
	for _, r := range startPageRanges(string(maps), exe) {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, uintptr(r[0]), uintptr(r[1]-r[0]), syscall.MADV_DONTNEED)
	}
}

// pagesDroppable reports that an executable's read-only mappings hold
// only its file's bytes, from the first bytes of the file (its ELF header
// and program headers): a fixed-address executable (ET_EXEC, ballot's
// builds) without a RELRO segment. A position-independent one (ET_DYN:
// -buildmode=pie, as some packagers build) has the loader write relocated
// pointers into pages it then makes read-only (PT_GNU_RELRO): dropped,
// those would read back the file's unrelocated values, a crash at the next
// access. Anything not understood: not droppable.
func pagesDroppable(head []byte) bool {
	const etExec, ptGNURelro = 2, 0x6474e552
	if len(head) < 52 || string(head[:4]) != "\x7fELF" {
		return false
	}
	var bo elfOrder
	switch head[5] {
	case 1:
	case 2:
		bo.big = true
	default:
		return false
	}
	if bo.u16(head[16:]) != etExec {
		return false
	}
	var phoff uint64
	var phentsize, phnum int
	switch head[4] {
	case 1: // ELFCLASS32: 386, arm, mips
		phoff, phentsize, phnum = uint64(bo.u32(head[28:])), int(bo.u16(head[42:])), int(bo.u16(head[44:]))
	case 2:
		if len(head) < 64 {
			return false
		}
		phoff, phentsize, phnum = bo.u64(head[32:]), int(bo.u16(head[54:])), int(bo.u16(head[56:]))
	default:
		return false
	}
	if phentsize < 4 {
		return false
	}
	for i := range phnum {
		off := phoff + uint64(i*phentsize)
		if off+4 > uint64(len(head)) {
			return false
		}
		if bo.u32(head[off:]) == ptGNURelro {
			return false
		}
	}
	return true
}

// elfOrder reads an ELF file's numbers in its byte order (encoding/binary
// without its package in the binary).
type elfOrder struct{ big bool }

func (o elfOrder) u64(b []byte) uint64 {
	var v uint64
	for i := range 8 {
		if o.big {
			v = v<<8 | uint64(b[i])
		} else {
			v |= uint64(b[i]) << (8 * i)
		}
	}
	return v
}

func (o elfOrder) u32(b []byte) uint32 {
	if o.big {
		return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	}
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func (o elfOrder) u16(b []byte) uint16 {
	if o.big {
		return uint16(b[0])<<8 | uint16(b[1])
	}
	return uint16(b[0]) | uint16(b[1])<<8
}

// readHead is the first 64 KiB of a file (its ELF headers), or less.
func readHead(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, 64<<10)
	n, _ := io.ReadFull(f, b)
	return b[:n]
}

// startPageRanges are the address ranges of exe's read-only mappings
// (r-xp, r--p) in a /proc/PID/maps listing: never a writable one.
func startPageRanges(maps, exe string) [][2]uint64 {
	var out [][2]uint64
	for _, line := range strings.Split(maps, "\n") {
		// start-end perms offset dev inode path
		f := strings.Fields(line)
		if len(f) != 6 || f[5] != exe || (f[1] != "r-xp" && f[1] != "r--p") {
			continue
		}
		from, to, _ := strings.Cut(f[0], "-")
		a, err1 := strconv.ParseUint(from, 16, 64)
		b, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || b <= a {
			continue
		}
		out = append(out, [2]uint64{a, b})
	}
	return out
}
