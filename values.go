package main

// Checks of parameter values. Each returns only the reason; callers add
// the source (flag, environment variable or config file key).

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

func oneOf[T ~string](v, what string, allowed ...T) (T, error) {
	names := make([]string, len(allowed))
	for i, a := range allowed {
		if strings.EqualFold(v, string(a)) {
			return a, nil
		}
		names[i] = string(a)
	}
	return "", fmt.Errorf("%suse one of %s", what, strings.Join(names, ", "))
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errors.New("not a boolean; use true or false")
	}
	return b, nil
}

func parseDuration(v string, positive bool) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return 0, errors.New("not a duration; use a Go duration such as 5s or 500ms")
	case d < 0:
		return 0, errors.New("must not be negative")
	case positive && d == 0:
		return 0, errors.New("must be greater than zero")
	}
	return d, nil
}

func loadLocation(v string) (*time.Location, error) {
	if v == "" {
		return nil, errors.New("must not be empty; use an IANA time zone name such as Europe/Berlin, UTC or Local")
	}
	loc, err := time.LoadLocation(v)
	if err != nil {
		return nil, errors.New("unknown time zone; use an IANA name such as Europe/Berlin, UTC or Local")
	}
	return loc, nil
}

// splitCommandLine splits v into argv the way a POSIX shell splits words,
// but expands nothing and runs no shell: words are separated by unquoted
// spaces, tabs and newlines; '...' is literal; inside "..." a backslash
// escapes only \\ \" \$ \` (and a newline, which it removes); outside quotes
// a backslash escapes any character (and removes a newline). $, `, *, ~, ;,
// |, >, # and the like are ordinary characters.
func splitCommandLine(v string) ([]string, error) {
	var (
		argv   []string
		word   strings.Builder
		inWord bool // a word has begun, possibly empty (as after '')
	)
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				argv = append(argv, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(v[i+1:], '\'')
			if end < 0 {
				return nil, errors.New(`unterminated single quote; close it with ', or write \' for a literal one`)
			}
			word.WriteString(v[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(v) && v[i] != '"'; i++ {
				if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("\\\"$`\n", v[i+1]) >= 0 {
					i++
					if v[i] == '\n' {
						continue
					}
				}
				word.WriteByte(v[i])
			}
			if i == len(v) {
				return nil, errors.New(`unterminated double quote; close it with ", or write \" for a literal one`)
			}
			inWord = true
		case c == '\\':
			if i+1 == len(v) {
				return nil, errors.New(`ends with a backslash that escapes nothing; write \\ for a backslash`)
			}
			i++
			if v[i] != '\n' {
				word.WriteByte(v[i])
				inWord = true
			}
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		argv = append(argv, word.String())
	}
	return argv, checkArgv(argv)
}

// checkArgv checks a hook's command line, split or given as a JSON array.
func checkArgv(argv []string) error {
	if len(argv) == 0 {
		return errors.New("empty command line; name a command to run, e.g. /usr/local/bin/promote")
	}
	if argv[0] == "" {
		return errors.New("the command name is an empty string")
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return errors.New("contains a NUL character")
		}
	}
	return nil
}

// maxLeaderData bounds --leader-data, which is stored in one ZooKeeper node.
const maxLeaderData = 512 << 10

// leaderData resolves a --leader-data value: "@PATH" is the content of file
// PATH (relative to the working directory), "@@..." a literal "@...", and
// anything else is itself.
func leaderData(v string) (string, error) {
	path, isFile := strings.CutPrefix(v, "@")
	switch {
	case strings.HasPrefix(path, "@"):
		v, isFile = path, false
	case isFile && path == "":
		return "", errors.New("@ names no file; use @PATH to read a file, or @@ for a literal leading @")
	}
	if !isFile {
		if len(v) > maxLeaderData {
			return "", fmt.Errorf("is %d bytes; at most 512 KiB (%d bytes) can be published", len(v), maxLeaderData)
		}
		return v, nil
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return "", fmt.Errorf("cannot read file %s: is a directory", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read file %s: %v", path, pathErr(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLeaderData+1))
	if err != nil {
		return "", fmt.Errorf("cannot read file %s: %v", path, pathErr(err))
	}
	if len(data) > maxLeaderData {
		return "", fmt.Errorf("file %s is larger than 512 KiB (%d bytes), the most that can be published", path, maxLeaderData)
	}
	return string(data), nil
}

// checkZKPath checks an absolute ZooKeeper node path, following ZooKeeper's
// own PathUtils.validatePath, and refuses "/" and the reserved /zookeeper.
func checkZKPath(p string) error {
	const hint = "; use an absolute ZooKeeper path such as /ballot/election"
	if p == "" {
		return errors.New("must not be empty" + hint)
	}
	if !utf8.ValidString(p) {
		return errors.New("not valid UTF-8" + hint)
	}
	for _, r := range p {
		if unicode.IsControl(r) || (r >= 0xd800 && r <= 0xf8ff) || (r >= 0xfff0 && r <= 0xffff) {
			return fmt.Errorf("contains the character %U, which ZooKeeper does not allow in paths", r)
		}
	}
	switch {
	case p[0] != '/':
		return errors.New("not absolute: must start with /" + hint)
	case p == "/":
		return errors.New("must name a node below /" + hint)
	case strings.HasSuffix(p, "/"):
		return errors.New("must not end with /" + hint)
	}
	segs := strings.Split(p[1:], "/")
	for _, seg := range segs {
		switch seg {
		case "":
			return errors.New("contains an empty segment (//)" + hint)
		case ".", "..":
			return errors.New(`must not contain "." or ".." segments` + hint)
		}
	}
	if segs[0] == "zookeeper" {
		return errors.New("/zookeeper is reserved by ZooKeeper" + hint)
	}
	return nil
}

// fileName checks a parameter naming a file; the file itself is read once
// every parameter is known (zkaccess.go).
func fileName(v string) (string, error) {
	if v == "" {
		return "", errors.New("must name a file")
	}
	if strings.IndexByte(v, 0) >= 0 {
		return "", errors.New("contains a NUL character")
	}
	return v, nil
}

// checkServerName checks a name a server certificate must be valid for: a
// DNS name or an IP address.
func checkServerName(v string) error {
	if v == "" {
		return errors.New("must not be empty; use the DNS name (or IP address) the servers' certificates are issued for")
	}
	if net.ParseIP(v) != nil {
		return nil
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return errors.New("not a host name; use the DNS name (or IP address) the servers' certificates are issued for")
		}
	}
	return nil
}

// splitChroot cuts a chroot suffix, as in ZooKeeper's own connection
// strings (zk1:2181,zk2:2181/app), off a server list. "/" alone is no
// chroot, as for ZooKeeper.
func splitChroot(v string) (list, chroot string, err error) {
	i := strings.IndexByte(v, '/')
	if i < 0 {
		return v, "", nil
	}
	list, chroot = v[:i], v[i:]
	switch {
	case strings.Contains(chroot, ","):
		return "", "", errors.New("a chroot suffix goes after the last server, e.g. zk1:2181,zk2:2181/app")
	case chroot == "/":
		return list, "", nil
	}
	if err := checkZKPath(chroot); err != nil {
		return "", "", fmt.Errorf("chroot %q: %v", chroot, err)
	}
	return list, chroot, nil
}

// parseServerList splits a comma-separated list of servers, with an
// optional chroot suffix, and normalises each server to host:port.
func parseServerList(v string) ([]string, string, error) {
	v, chroot, err := splitChroot(v)
	if err != nil {
		return nil, "", err
	}
	servers, err := parseServers(v)
	return servers, chroot, err
}

// parseServers splits a comma-separated list of servers and normalises
// each to host:port.
func parseServers(v string) ([]string, error) {
	var out []string
	for _, e := range strings.Split(v, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			return nil, errors.New("empty server entry; use host or host:port, separated by commas")
		}
		hp, err := normalizeServer(e)
		if err != nil {
			return nil, fmt.Errorf("server %q: %v", e, err)
		}
		out = append(out, hp)
	}
	return out, nil
}

// normalizeServer turns "host", "host:port", "[v6addr]" or "[v6addr]:port"
// into host:port, with port 2181 when none is given.
func normalizeServer(e string) (string, error) {
	host, port := e, "2181"
	if strings.HasPrefix(e, "[") {
		end := strings.IndexByte(e, ']')
		if end < 0 {
			return "", errors.New(`missing "]" after IPv6 address`)
		}
		host = e[1:end]
		switch rest := e[end+1:]; {
		case rest == "":
		case rest[0] == ':':
			port = rest[1:]
		default:
			return "", errors.New(`unexpected text after "]"; use [address]:port`)
		}
		ip, _, _ := strings.Cut(host, "%")
		if !strings.Contains(ip, ":") || net.ParseIP(ip) == nil {
			return "", errors.New("not an IPv6 address between [ and ]")
		}
	} else {
		if strings.Count(e, ":") > 1 {
			return "", errors.New("IPv6 addresses need brackets, e.g. [::1]:2181")
		}
		if h, p, ok := strings.Cut(e, ":"); ok {
			host, port = h, p
		}
		if host == "" {
			return "", errors.New("missing host name")
		}
		for _, r := range host {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
				return "", errors.New("not a host name; use host or host:port")
			}
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strings.ContainsAny(port, "+-") {
		return "", fmt.Errorf("bad port %q; use a port number from 1 to 65535", port)
	}
	return net.JoinHostPort(host, strconv.Itoa(n)), nil
}

func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// rerunLimit is --rerun-limit N/D: under on-child-error rerun, at most N
// reruns after failures within any window D; the failure after them hands
// over to the next in line (Pacemaker's migration-threshold and
// failure-timeout). The zero value is no limit.
type rerunLimit struct {
	N      int
	Window time.Duration
}

func (l rerunLimit) set() bool { return l.Window > 0 }

func (l rerunLimit) String() string {
	if !l.set() {
		return "off"
	}
	return strconv.Itoa(l.N) + "/" + l.Window.String()
}

// parseRerunLimit reads "N/DURATION" or "off".
func parseRerunLimit(v string) (rerunLimit, error) {
	if v == "off" {
		return rerunLimit{}, nil
	}
	ns, ds, ok := strings.Cut(v, "/")
	if !ok {
		return rerunLimit{}, errors.New("not N/DURATION; use a count of reruns and a window, such as 3/10m (at most 3 reruns within 10 minutes), or off")
	}
	n, err := strconv.Atoi(ns)
	switch {
	case err != nil:
		return rerunLimit{}, fmt.Errorf("%q is not a whole number of reruns; use N/DURATION such as 3/10m, N from 0 to 100", ns)
	case n < 0 || n > 100:
		return rerunLimit{}, fmt.Errorf("%d reruns: out of range; use 0 (hand over at the first failure) to 100", n)
	}
	d, err := time.ParseDuration(ds)
	if err != nil || d < time.Second {
		return rerunLimit{}, fmt.Errorf("window %q: use a Go duration of at least 1s, such as 3/10m", ds)
	}
	return rerunLimit{N: n, Window: d}, nil
}

// parseSpread reads --spread: 0, or a duration of at least 1s.
func parseSpread(v string) (time.Duration, error) {
	d, err := parseDuration(v, false)
	if err == nil && d > 0 && d < time.Second {
		err = errors.New("below 1s spreads nothing (offsets are whole seconds); use 0 or at least 1s, such as 30m")
	}
	return d, err
}

// sortStrings sorts s in place with sort.Slice, whose code the binary has
// anyway: sort.Strings and slices.Sort would add a generic copy of pdqsort
// for strings, about 12 KB of the size budget (issue 35).
func sortStrings(s []string) {
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
}
