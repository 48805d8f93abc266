package main

// What ballot used of flag, text/tabwriter, os/user and net/url, written
// out: each package was linked for one small use and cost the binary 3 to
// 27 KB (issue 35, BENCHMARKS.md "Where the bytes go"). Each does exactly
// what the standard package did on any input; stdlite_test.go checks them
// against it (and spreadHash's FNV-1a against hash/fnv).

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------
// flag: a FlagSet with ContinueOnError, its output discarded and no usage.

// flagSetter is a flag's value: flag.Value with flag's IsBoolFlag.
type flagSetter interface {
	Set(string) error
	IsBoolFlag() bool
}

// errFlagHelp is flag.ErrHelp: -h or -help given and not defined.
var errFlagHelp = errors.New("flag: help requested")

type flagSet struct {
	formal map[string]flagSetter
	args   []string
}

func newFlags() *flagSet { return &flagSet{formal: map[string]flagSetter{}} }

// Var defines a flag; it panics as flag's does on a bad or repeated name.
func (f *flagSet) Var(v flagSetter, name string) {
	if strings.HasPrefix(name, "-") || strings.Contains(name, "=") {
		panic(fmt.Sprintf("flag %q begins with - or contains =", name))
	}
	if _, dup := f.formal[name]; dup {
		panic("flag redefined: " + name)
	}
	f.formal[name] = v
}

func (f *flagSet) Lookup(name string) flagSetter { return f.formal[name] }

// Args is what Parse left: the arguments after the flags.
func (f *flagSet) Args() []string { return f.args }

// Parse is flag.FlagSet.Parse: flags up to the first non-flag argument
// or "--" (swallowed); -name and --name alike, a value after "=" or in
// the next argument, a bool flag's only after "=".
func (f *flagSet) Parse(args []string) error {
	f.args = args
	for len(f.args) > 0 {
		s := f.args[0]
		if len(s) < 2 || s[0] != '-' {
			return nil
		}
		minuses := 1
		if s[1] == '-' {
			minuses++
			if len(s) == 2 {
				f.args = f.args[1:]
				return nil
			}
		}
		name := s[minuses:]
		if len(name) == 0 || name[0] == '-' || name[0] == '=' {
			return fmt.Errorf("bad flag syntax: %s", s)
		}
		f.args = f.args[1:]
		value, hasValue := "", false
		if i := strings.IndexByte(name[1:], '='); i >= 0 {
			name, value, hasValue = name[:i+1], name[i+2:], true
		}
		v, ok := f.formal[name]
		if !ok {
			if name == "help" || name == "h" {
				return errFlagHelp
			}
			return fmt.Errorf("flag provided but not defined: -%s", name)
		}
		if v.IsBoolFlag() {
			if !hasValue {
				if err := v.Set("true"); err != nil {
					return fmt.Errorf("invalid boolean flag %s: %v", name, err)
				}
			} else if err := v.Set(value); err != nil {
				return fmt.Errorf("invalid boolean value %q for -%s: %v", value, name, err)
			}
			continue
		}
		if !hasValue && len(f.args) > 0 {
			value, hasValue, f.args = f.args[0], true, f.args[1:]
		}
		if !hasValue {
			return fmt.Errorf("flag needs an argument: -%s", name)
		}
		if err := v.Set(value); err != nil {
			return fmt.Errorf("invalid value %q for flag -%s: %v", value, name, err)
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// text/tabwriter: NewWriter(w, 0, 0, 2, ' ', 0), written text, Flush.

type alignCell struct{ size, width int } // bytes in buf, width in runes

type aligner struct {
	out     []byte
	buf     []byte // the cells' text, terminators dropped
	pos     int    // buf[pos:] is not yet counted in cell.width
	cell    alignCell
	escaped bool // inside text between two 0xff bytes (tabwriter.Escape)
	lines   [][]alignCell
	widths  []int
}

// alignColumns is what text/tabwriter writes for text with minwidth 0,
// padding 2 and padchar ' ', no flags: cells end at '\t' or '\v', lines at
// '\n' or '\f' ('\f' and a line of one cell end all column blocks), a
// column block is the run of lines that have that column, and each cell
// in it is padded with spaces to the widest (in runes) plus 2.
func alignColumns(text string) string {
	a := &aligner{lines: [][]alignCell{nil}}
	n := 0
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if a.escaped {
			if ch == 0xff {
				a.add(text[n : i+1])
				n = i + 1
				a.endEscape()
			}
			continue
		}
		switch ch {
		case '\t', '\v', '\n', '\f':
			a.add(text[n:i])
			a.updateWidth()
			n = i + 1
			line := &a.lines[len(a.lines)-1]
			*line = append(*line, a.cell)
			a.cell = alignCell{}
			if ch == '\n' || ch == '\f' {
				cells := len(*line)
				a.lines = append(a.lines, nil)
				if ch == '\f' || cells == 1 {
					a.flush()
				}
			}
		case 0xff:
			a.add(text[n:i])
			a.updateWidth()
			n = i
			a.escaped = true
		}
	}
	a.add(text[n:])
	if a.cell.size > 0 {
		if a.escaped {
			a.endEscape()
		}
		a.lines[len(a.lines)-1] = append(a.lines[len(a.lines)-1], a.cell)
		a.cell = alignCell{}
	}
	a.flush()
	return string(a.out)
}

func (a *aligner) add(s string) {
	a.buf = append(a.buf, s...)
	a.cell.size += len(s)
}

func (a *aligner) updateWidth() {
	a.cell.width += utf8.RuneCount(a.buf[a.pos:])
	a.pos = len(a.buf)
}

// endEscape: the escaped text counts but its two 0xff bytes do not.
func (a *aligner) endEscape() {
	a.updateWidth()
	a.cell.width -= 2
	a.escaped = false
}

func (a *aligner) flush() {
	a.format(0, 0, len(a.lines))
	a.buf, a.pos, a.cell, a.escaped = a.buf[:0], 0, alignCell{}, false
	a.lines, a.widths = [][]alignCell{nil}, a.widths[:0]
}

// format is tabwriter's: the widths of column len(a.widths) block by
// block, each block's lines formatted with the columns to its right.
func (a *aligner) format(pos, line0, line1 int) int {
	column := len(a.widths)
	for this := line0; this < line1; this++ {
		if column >= len(a.lines[this])-1 {
			continue
		}
		pos = a.writeLines(pos, line0, this)
		line0 = this
		width := 0
		for ; this < line1; this++ {
			line := a.lines[this]
			if column >= len(line)-1 {
				break
			}
			width = max(width, line[column].width+2)
		}
		a.widths = append(a.widths, width)
		pos = a.format(pos, line0, this)
		a.widths = a.widths[:len(a.widths)-1]
		line0 = this
	}
	return a.writeLines(pos, line0, line1)
}

func (a *aligner) writeLines(pos, line0, line1 int) int {
	for i := line0; i < line1; i++ {
		for j, c := range a.lines[i] {
			a.out = append(a.out, a.buf[pos:pos+c.size]...)
			pos += c.size
			if j < len(a.widths) {
				a.out = append(a.out, strings.Repeat(" ", a.widths[j]-c.width)...)
			}
		}
		if i+1 == len(a.lines) {
			a.out = append(a.out, a.buf[pos:pos+a.cell.size]...)
			pos += a.cell.size
		} else {
			a.out = append(a.out, '\n')
		}
	}
	return pos
}

// ---------------------------------------------------------------------------
// os/user: Current().Username, as without cgo.

// userName is the name of the user ballot runs as, found as os/user's
// Current finds it without cgo: the first /etc/passwd row of the uid, else
// $USER provided $HOME is set too; ok false when neither.
func userName() (name string, ok bool) {
	uid := strconv.Itoa(os.Getuid())
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		if name, ok := passwdName(string(b), uid); ok {
			return name, true
		}
	}
	if u := os.Getenv("USER"); u != "" && os.Getenv("HOME") != "" {
		return u, true
	}
	return "", false
}

// passwdName is the name in the first row of passwd for uid, read as
// os/user reads it: rows trimmed, comments and short rows skipped, no
// name starting with + or -, a numeric gid.
func passwdName(passwd, uid string) (string, bool) {
	for _, l := range strings.Split(passwd, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || l[0] == '#' || !strings.Contains(l, ":"+uid+":") || strings.Count(l, ":") < 6 {
			continue
		}
		f := strings.SplitN(l, ":", 7)
		if f[2] != uid || f[0] == "" || f[0][0] == '+' || f[0][0] == '-' {
			continue
		}
		if _, err := strconv.Atoi(f[2]); err != nil {
			continue
		}
		if _, err := strconv.Atoi(f[3]); err != nil {
			continue
		}
		return f[0], true
	}
	return "", false
}

// ---------------------------------------------------------------------------
// net/url: Parse, for --ping-url and its redaction. Only a build without
// TLS uses parseURLLite (url_notls.go): with TLS, crypto/x509 links net/url
// anyway, and url_tls.go takes url.Parse's answer.

// liteURL is what ballot reads of a url.URL, under the same names.
type liteURL struct {
	Scheme, Opaque, Host, Path, RawPath, RawQuery, Fragment string
	User                                                    *struct{} // non-nil: a userinfo@
}

// url's escaping modes (net/url's encoding).
const (
	escPath = iota
	escHost
	escZone
	escUser
	escFragment
)

// parseURLLite is url.Parse: the same URLs refused, the same parts.
func parseURLLite(raw string) (*liteURL, error) {
	rest, frag, _ := strings.Cut(raw, "#")
	u, err := parseURLNoFragment(rest)
	if err != nil {
		return nil, err
	}
	if frag != "" {
		if u.Fragment, err = urlUnescape(frag, escFragment); err != nil {
			return nil, err
		}
	}
	return u, nil
}

func parseURLNoFragment(raw string) (*liteURL, error) {
	for i := 0; i < len(raw); i++ {
		if raw[i] < ' ' || raw[i] == 0x7f {
			return nil, errors.New("net/url: invalid control character in URL")
		}
	}
	u := &liteURL{}
	if raw == "*" {
		u.Path = "*"
		return u, nil
	}
	rest := raw
	for i := 0; i < len(raw); i++ { // the scheme: [a-zA-Z][a-zA-Z0-9+.-]*:
		c := raw[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			continue
		}
		if ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') && i > 0 {
			continue
		}
		if c == ':' {
			if i == 0 {
				return nil, errors.New("missing protocol scheme")
			}
			u.Scheme, rest = strings.ToLower(raw[:i]), raw[i+1:]
		}
		break
	}
	if strings.HasSuffix(rest, "?") && strings.Count(rest, "?") == 1 {
		rest = rest[:len(rest)-1]
	} else {
		rest, u.RawQuery, _ = strings.Cut(rest, "?")
	}
	if !strings.HasPrefix(rest, "/") {
		if u.Scheme != "" {
			u.Opaque = rest
			return u, nil
		}
		if segment, _, _ := strings.Cut(rest, "/"); strings.Contains(segment, ":") {
			return nil, errors.New("first path segment in URL cannot contain colon")
		}
	}
	if (u.Scheme != "" || !strings.HasPrefix(rest, "///")) && strings.HasPrefix(rest, "//") {
		authority := rest[2:]
		rest = ""
		if i := strings.Index(authority, "/"); i >= 0 {
			authority, rest = authority[:i], authority[i:]
		}
		hostPart := authority
		if i := strings.LastIndex(authority, "@"); i >= 0 {
			hostPart = authority[i+1:]
		}
		var err error
		if u.Host, err = urlHost(u.Scheme, hostPart); err != nil {
			return nil, err
		}
		if i := strings.LastIndex(authority, "@"); i >= 0 {
			if err := urlUserinfo(authority[:i]); err != nil {
				return nil, err
			}
			u.User = &struct{}{}
		}
	}
	path, err := urlUnescape(rest, escPath)
	if err != nil {
		return nil, err
	}
	u.Path = path
	if urlEscapePath(path) != rest {
		u.RawPath = rest
	}
	return u, nil
}

// urlUserinfo checks a userinfo as url's parseAuthority does.
func urlUserinfo(s string) error {
	for _, r := range s {
		if 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune("-._:~!$&'()*+,;=%@", r) {
			continue
		}
		return errors.New("net/url: invalid userinfo")
	}
	name, password, _ := strings.Cut(s, ":")
	if _, err := urlUnescape(name, escUser); err != nil {
		return err
	}
	_, err := urlUnescape(password, escUser)
	return err
}

// urlHost is url's parseHost: host[:port], or [IPv6 literal][:port].
func urlHost(scheme, host string) (string, error) {
	if open := strings.LastIndex(host, "["); open > 0 {
		return "", errors.New("invalid IP-literal")
	} else if open == 0 {
		end := strings.LastIndex(host, "]")
		if end < 0 {
			return "", errors.New("missing ']' in host")
		}
		colonPort := host[end+1:]
		if !validURLPort(colonPort) {
			return "", errors.New("invalid port after host")
		}
		colonPort, err := urlUnescape(colonPort, escHost)
		if err != nil {
			return "", err
		}
		name := host[1:end]
		var addr string
		if zone := strings.Index(name, "%25"); zone >= 0 {
			h, err := urlUnescape(name[:zone], escHost)
			if err != nil {
				return "", err
			}
			z, err := urlUnescape(name[zone:], escZone)
			if err != nil {
				return "", err
			}
			addr = h + z
		} else if addr, err = urlUnescape(name, escHost); err != nil {
			return "", err
		}
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			return "", err
		}
		if ip.Is4() {
			return "", errors.New("invalid IP-literal")
		}
		return "[" + addr + "]" + colonPort, nil
	} else if i := strings.Index(host, ":"); i != -1 {
		last := strings.LastIndex(host, ":")
		if last != i && (scheme != "http" && scheme != "https" || !urlStrictColons()) {
			i = last
		}
		if !validURLPort(host[i:]) {
			return "", errors.New("invalid port after host")
		}
	}
	return urlUnescape(host, escHost)
}

// urlStrictColons is GODEBUG urlstrictcolons as net/url reads it: "0",
// the default for go.mod's go 1.22, unless GODEBUG's last setting of it
// says otherwise.
func urlStrictColons() bool {
	v := "0"
	for _, kv := range strings.Split(os.Getenv("GODEBUG"), ",") {
		if k, val, ok := strings.Cut(kv, "="); ok && k == "urlstrictcolons" {
			v = val
		}
	}
	return v != "0"
}

// validURLPort: "" or ":" and digits.
func validURLPort(port string) bool {
	if port == "" {
		return true
	}
	if port[0] != ':' {
		return false
	}
	for _, b := range port[1:] {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unHex(c byte) byte { return 9*(c>>6) + (c & 15) }

// urlUnescape is url's unescape for the modes above ('+' stays '+').
func urlUnescape(s string, mode int) (string, error) {
	n := 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '%':
			n++
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", errors.New("invalid URL escape")
			}
			if mode == escHost && unHex(s[i+1]) < 8 && s[i:i+3] != "%25" {
				return "", errors.New("invalid URL escape")
			}
			if v := unHex(s[i+1])<<4 | unHex(s[i+2]); mode == escZone && s[i:i+3] != "%25" && v != ' ' && urlShouldEscape(v, escHost) {
				return "", errors.New("invalid URL escape")
			}
			i += 3
		default:
			if (mode == escHost || mode == escZone) && s[i] < 0x80 && urlShouldEscape(s[i], mode) {
				return "", errors.New("invalid character in host name")
			}
			i++
		}
	}
	if n == 0 {
		return s, nil
	}
	var t strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			t.WriteByte(unHex(s[i+1])<<4 | unHex(s[i+2]))
			i += 2
		} else {
			t.WriteByte(s[i])
		}
	}
	return t.String(), nil
}

// urlShouldEscape is net/url's shouldEscape for the path and the host.
func urlShouldEscape(c byte, mode int) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
		return false
	}
	if (mode == escHost || mode == escZone) && strings.IndexByte("!$&'()*+,;=:[]<>\"", c) >= 0 {
		return false
	}
	if mode == escPath && strings.IndexByte("$&+,/:;=@", c) >= 0 {
		return false
	}
	return true
}

// urlEscapePath is url's escape(s, encodePath).
func urlEscapePath(s string) string {
	var t strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; urlShouldEscape(c, escPath) {
			t.WriteByte('%')
			t.WriteByte("0123456789ABCDEF"[c>>4])
			t.WriteByte("0123456789ABCDEF"[c&15])
		} else {
			t.WriteByte(c)
		}
	}
	return t.String()
}

// EscapedPath is url.URL's: RawPath when it is a valid escaping of Path.
func (u *liteURL) EscapedPath() string {
	if u.RawPath != "" {
		valid := true
		for i := 0; i < len(u.RawPath); i++ {
			if c := u.RawPath[i]; !strings.ContainsRune("!$&'()*+,;=:@[]%", rune(c)) && urlShouldEscape(c, escPath) {
				valid = false
			}
		}
		if p, err := urlUnescape(u.RawPath, escPath); valid && err == nil && p == u.Path {
			return u.RawPath
		}
	}
	if u.Path == "*" {
		return "*"
	}
	return urlEscapePath(u.Path)
}

// Hostname and Port are url.URL's: Host split at a valid ":port", the
// brackets of an IPv6 literal taken off.
func (u *liteURL) Hostname() string {
	host, _ := splitURLHostPort(u.Host)
	return host
}

func (u *liteURL) Port() string {
	_, port := splitURLHostPort(u.Host)
	return port
}

func splitURLHostPort(hostPort string) (host, port string) {
	host = hostPort
	if colon := strings.LastIndexByte(host, ':'); colon != -1 && validURLPort(host[colon:]) {
		host, port = host[:colon], host[colon+1:]
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return host, port
}
