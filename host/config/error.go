package config

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a configuration problem. It names the key and where the value
// came from: a file (and line, when known), an environment variable or a
// flag.
type Error struct {
	File   string // the configuration file, when the value came from it
	Line   int    // 1-based line in File, 0 when unknown
	Source string // "env CORRAL_…" or "flag" when the value came from there
	Key    string // the offending key, "" for whole-file problems
	Msg    string
	Err    error // the cause, if any
}

// Error implements error: "corral.yaml:12: plugin.files.engine: …".
func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Source != "":
		fmt.Fprintf(&b, "%s: ", e.Source)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "%s: ", e.Key)
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// keyLine finds the line of key in a configuration file, 0 if not found.
func keyLine(path string, data []byte, key string) int {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return yamlLine(data, key)
	case ".toml":
		return tomlLine(data, key)
	}
	return 0
}

// yamlLine walks the YAML document to the deepest node of key that exists.
func yamlLine(data []byte, key string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n := doc.Content[0]
	line := 0
	for _, seg := range strings.Split(key, ".") {
		if n.Kind != yaml.MappingNode {
			break
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				line = n.Content[i].Line
				next = n.Content[i+1]
				break
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}

// tomlLine finds key in a TOML file by following table headers and
// (possibly dotted) assignments. It does not understand multi-line values,
// which only makes it miss, never mislead by much.
func tomlLine(data []byte, key string) int {
	sc := bufio.NewScanner(bytes.NewReader(data))
	table, best, n := "", 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		var full string
		if strings.HasPrefix(line, "[") {
			table = unquoteTOML(strings.Trim(strings.SplitN(line, "]", 2)[0], "[ "))
			full = table
		} else if i := strings.Index(line, "="); i > 0 {
			full = unquoteTOML(strings.TrimSpace(line[:i]))
			if table != "" {
				full = table + "." + full
			}
		} else {
			continue
		}
		if full == key {
			return n
		}
		if strings.HasPrefix(key, full+".") && best == 0 {
			best = n
		}
	}
	return best
}

func unquoteTOML(s string) string {
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

var lineRE = regexp.MustCompile(`line (\d+)`)

// parseErrorLine extracts a line number from a parser's error, 0 if none.
func parseErrorLine(err error) int {
	type positioned interface{ Position() (int, int) }
	if p, ok := err.(positioned); ok {
		l, _ := p.Position()
		return l
	}
	if m := lineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}
