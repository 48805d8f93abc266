package main

// The JSON config file: finding it, reading it, and naming the file, line
// and key of anything wrong in it.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"ballot/internal/jsonlite"
)

// configJobsKey is the config file's key for run crontab's jobs.
const configJobsKey = "jobs"

type configFile struct {
	path   string
	values map[string]jsonlite.RawMessage
}

func (c *configFile) get(name string) (jsonlite.RawMessage, bool) {
	if c == nil {
		return nil, false
	}
	raw, ok := c.values[name]
	return raw, ok
}

// apply decodes the config file's value for p and stores it in s.
func (c *configFile) apply(s *Settings, p *param, raw jsonlite.RawMessage) error {
	prefix := fmt.Sprintf("config file %s: key %q", c.path, p.name)
	got := describeJSON(raw)
	switch p.kind {
	case kindList:
		return applyServerList(s, prefix, raw, got)
	case kindBool:
		var b bool
		if string(raw) == "null" || jsonlite.Unmarshal(raw, &b) != nil {
			return usagef("%s: expected true or false, got %s", prefix, got)
		}
		return p.apply(s, strconv.FormatBool(b))
	case kindInt:
		n, ok := wholeNumber(raw)
		if !ok {
			return usagef("%s: expected a whole number such as 3, got %s", prefix, got)
		}
		if err := p.apply(s, strconv.FormatInt(n, 10)); err != nil {
			return usagef("%s %d: %v", prefix, n, err)
		}
		return nil
	case kindCommand:
		if len(raw) > 0 && raw[0] == '[' {
			// An array is argv as it is, without splitting.
			var elems []jsonlite.RawMessage
			if err := jsonlite.Unmarshal(raw, &elems); err != nil {
				return usagef("%s: %v", prefix, err)
			}
			argv := make([]string, len(elems))
			for i, e := range elems {
				if string(e) == "null" || jsonlite.Unmarshal(e, &argv[i]) != nil {
					return usagef(`%s: element %d: expected a string, got %s; use an array of strings such as ["/usr/local/bin/promote", "--now"]`,
						prefix, i+1, describeJSON(e))
				}
			}
			if err := checkArgv(argv); err != nil {
				return usagef("%s %s: %v", prefix, got, err)
			}
			setArgv(s, p, argv)
			return nil
		}
	}
	var v string
	if string(raw) == "null" || jsonlite.Unmarshal(raw, &v) != nil {
		switch p.kind {
		case kindDuration:
			return usagef(`%s: expected a duration string such as "5s", got %s`, prefix, got)
		case kindCommand:
			return usagef(`%s: expected a command line string or an array of strings such as ["/usr/local/bin/promote", "--now"], got %s`, prefix, got)
		}
		return usagef("%s: expected a string, got %s", prefix, got)
	}
	if err := p.apply(s, v); err != nil {
		return usagef("%s %s: %v", prefix, p.quote(v), err)
	}
	return nil
}

// applyServerList is zookeeper-servers from the file: an array of strings,
// the last of which may carry the chroot.
func applyServerList(s *Settings, prefix string, raw jsonlite.RawMessage, got string) error {
	var list []string
	if err := jsonlite.Unmarshal(raw, &list); err != nil || list == nil {
		return usagef(`%s: expected an array of strings such as ["zk1:2181", "zk2:2181"], got %s`, prefix, got)
	}
	if len(list) == 0 {
		return usagef("%s: the list is empty; name at least one server", prefix)
	}
	s.ZooKeeperServers = nil
	for i, e := range list {
		if strings.TrimSpace(e) == "" {
			return usagef("%s: entry %q: empty server entry; use host or host:port", prefix, e)
		}
		server, chroot, err := splitChroot(strings.TrimSpace(e))
		if err == nil && chroot != "" && i < len(list)-1 {
			err = errors.New(`a chroot suffix goes after the last server, e.g. ["zk1:2181", "zk2:2181/app"]`)
		}
		if err != nil {
			return usagef("%s: entry %q: %v", prefix, e, err)
		}
		hp, err := normalizeServer(server)
		if err != nil {
			return usagef("%s: entry %q: %v", prefix, e, err)
		}
		s.ZooKeeperServers = append(s.ZooKeeperServers, hp)
		s.ZooKeeperChroot = chroot
	}
	return nil
}

// setArgv stores argv, given as a JSON array, in the field of p.
func setArgv(s *Settings, p *param, argv []string) {
	switch p.name {
	case "on-promote":
		s.OnPromote = argv
	case "on-demote":
		s.OnDemote = argv
	case "health-check":
		s.HealthCheck = argv
	case "on-run-end":
		s.OnRunEnd = argv
	default:
		panic("ballot: setArgv: " + p.name + " is not a command line parameter")
	}
}

// wholeNumber decodes a JSON number with no fractional part (3, 3.0, 3e0);
// strings, fractions and other types are refused.
func wholeNumber(raw jsonlite.RawMessage) (int64, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, false // a string such as "3" is refused
	}
	if !jsonlite.Valid(raw) { // a number, whole: json.Number's text
		return 0, false
	}
	if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// compactJSON is raw on one line, as --debug shows a config file's value;
// a string without its quotes, as a flag would give it.
func compactJSON(raw jsonlite.RawMessage) string {
	var str string
	if jsonlite.Unmarshal(raw, &str) == nil {
		return str
	}
	var b bytes.Buffer
	if jsonlite.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// describeJSON renders a JSON value compactly on one line for messages.
func describeJSON(raw jsonlite.RawMessage) string {
	var b bytes.Buffer
	if jsonlite.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// loadConfig finds and reads the config file: --config-file, else
// BALLOT_CONFIG_FILE, else the first of defaultConfigPaths that exists. It returns
// nil when there is none. s.ConfigFile and s.Sources["config-file"] are set.
func loadConfig(s *Settings, flagVals []string, getenv func(string) string) (*configFile, error) {
	var path, src string
	switch {
	case len(flagVals) > 0:
		path = flagVals[len(flagVals)-1]
		src = fmt.Sprintf("--config-file %q", path)
		s.Sources["config-file"] = "flag"
		s.Values["config-file"] = path
	case getenv(envPrefix+"CONFIG_FILE") != "":
		path = getenv(envPrefix + "CONFIG_FILE")
		src = fmt.Sprintf("environment %sCONFIG_FILE %q", envPrefix, path)
		s.Sources["config-file"] = "environment " + envPrefix + "CONFIG_FILE"
		s.Values["config-file"] = path
	default:
		s.Sources["config-file"] = "default"
		for _, p := range defaultConfigPaths(getenv("HOME")) {
			_, err := os.Stat(p)
			if err == nil {
				path = p
				break
			}
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
				return nil, usagef("config file %s: cannot check it: %v", p, pathErr(err))
			}
		}
		if path == "" {
			return nil, nil
		}
		s.Values["config-file"] = path
		src = "config file " + path
	}

	if path == "" {
		return nil, usagef("%s: must name a file", src)
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil, usagef("%s: is a directory, not a file", src)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, usagef("%s: no such file", src)
		}
		return nil, usagef("%s: cannot read: %v", src, pathErr(err))
	}
	s.ConfigFile = path
	return parseConfig(path, data)
}

// parseConfig parses the JSON object in data; path is for messages.
func parseConfig(path string, data []byte) (*configFile, error) {
	prefix := "config file " + path
	yamlErr := usagef("%s: looks like YAML; ballot reads JSON only (see ballot.json.example)", prefix)
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".yaml" || ext == ".yml" {
		return nil, yamlErr
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, usagef("%s: file is empty; expected a JSON object such as {\"candidate-id\": \"a\"}", prefix)
	}

	raw, off, err := jsonlite.Value(data) // as a json.Decoder's Decode: the first value
	if err != nil {
		if looksLikeYAML(data) {
			return nil, yamlErr
		}
		var se *jsonlite.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, int(se.Offset))
			return nil, usagef("%s: invalid JSON at line %d, column %d: %v", prefix, line, col, se)
		}
		line, col := lineCol(data, len(data)+1)
		return nil, usagef("%s: invalid JSON at line %d, column %d: unexpected end of file", prefix, line, col)
	}
	if len(bytes.TrimSpace(data[off:])) > 0 {
		// Point at the first non-blank byte after the object.
		off += len(data[off:]) - len(bytes.TrimLeft(data[off:], " \t\r\n"))
		line, col := lineCol(data, off+1)
		return nil, usagef("%s: unexpected data after the JSON object at line %d, column %d", prefix, line, col)
	}
	if raw[0] != '{' {
		kind := map[byte]string{'[': "an array", '"': "a string", 't': "a boolean", 'f': "a boolean", 'n': "null"}[raw[0]]
		if kind == "" {
			kind = "a number"
		}
		return nil, usagef("%s: expected a JSON object such as {\"candidate-id\": \"a\"}, got %s", prefix, kind)
	}

	// Walk the object's keys in order, to report unknown and duplicate keys.
	cfg := &configFile{path: path, values: map[string]jsonlite.RawMessage{}}
	keys, vals := jsonlite.Object(raw)
	for i, key := range keys {
		v := vals[i]
		p := lookupParam(key)
		switch {
		case key == configJobsKey:
			// run crontab's jobs (crontab.go); every other command ignores them.
		case key == "config-file":
			return nil, usagef("%s: unknown key %q; a config file cannot name another one, use --config-file or BALLOT_CONFIG_FILE", prefix, key)
		case key == "once-key":
			// A fixed key in a file every run reads would run the job once,
			// ever: the key belongs to each invocation.
			return nil, usagef("%s: key %q is not accepted in a config file; give it to each run, e.g. --once-key \"$(date +%%F)\"", prefix, key)
		case p == nil:
			return nil, usagef("%s: unknown key %q; %s", prefix, key, suggestKey(key))
		}
		if _, dup := cfg.values[key]; dup {
			return nil, usagef("%s: key %q appears more than once", prefix, key)
		}
		cfg.values[key] = v
	}
	return cfg, nil
}

// suggestKey names the closest known key when there is one, else them all.
func suggestKey(key string) string {
	var known []string
	best, bestDist := "", 1<<30
	for _, p := range params {
		if p.name == "config-file" {
			continue
		}
		known = append(known, p.name)
		if d := editDistance(strings.ToLower(strings.ReplaceAll(key, "_", "-")), p.name); d < bestDist {
			best, bestDist = p.name, d
		}
	}
	if bestDist <= 3 || (bestDist <= len(key)/3 && bestDist < len(best)/2) {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return "known keys: " + compactKeys(known)
}

// compactKeys lists keys with a shared first word once, brace-style
// (on-{promote,demote}), to keep the one-line message short.
func compactKeys(keys []string) string {
	var out []string
	groups := map[string][]string{}
	var order []string
	for _, k := range keys {
		head, rest, ok := strings.Cut(k, "-")
		if !ok {
			head, rest = k, ""
		}
		if _, seen := groups[head]; !seen {
			order = append(order, head)
		}
		groups[head] = append(groups[head], rest)
	}
	for _, h := range order {
		g := groups[h]
		switch {
		case len(g) == 1 && g[0] == "":
			out = append(out, h)
		case len(g) == 1:
			out = append(out, h+"-"+g[0])
		default:
			out = append(out, h+"-{"+strings.Join(g, ",")+"}")
		}
	}
	return strings.Join(out, ", ")
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// lineCol converts "the error is after reading off bytes" into the 1-based
// line and column of byte off-1.
func lineCol(data []byte, off int) (line, col int) {
	if off > len(data)+1 {
		off = len(data) + 1
	}
	if off < 1 {
		return 1, 1
	}
	before := data[:off-1]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n') - 1
	return line, col
}

// looksLikeYAML is a heuristic for a file that failed to parse as JSON: a
// "---" document marker, a "# comment", a "- item" or a "key: value" line.
func looksLikeYAML(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if line[0] == '{' || line[0] == '[' {
			return false
		}
		if strings.HasPrefix(line, "---") || line[0] == '#' || strings.HasPrefix(line, "- ") {
			return true
		}
		key, _, ok := strings.Cut(line, ":")
		key = strings.Trim(strings.TrimSpace(key), `"'`)
		if !ok || key == "" {
			return false
		}
		for _, r := range key {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.') {
				return false
			}
		}
		return true
	}
	return false
}
