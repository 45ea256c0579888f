package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/v2"
)

// decodeProblems turns a decode failure into one problem per value that
// does not fit its key's type, each naming the value and the form the key
// accepts. ok is false when err holds no per-key failure.
func decodeProblems(err error, k *koanf.Koanf) (ps []problem, ok bool) {
	for _, de := range leafDecodeErrors(err) {
		key := decodeKey(de.Name())
		ps = append(ps, problem{key, valueProblem(key, k.Get(key), de.Unwrap())})
	}
	return ps, len(ps) > 0
}

// leafDecodeErrors returns the innermost *mapstructure.DecodeError of each
// branch of err (mapstructure joins one per field that failed).
func leafDecodeErrors(err error) []*mapstructure.DecodeError {
	var out []*mapstructure.DecodeError
	var walk func(error) bool
	walk = func(err error) bool {
		found := false
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, c := range e.Unwrap() {
				found = walk(c) || found
			}
			return found
		case *mapstructure.DecodeError:
			if !walk(e.Unwrap()) {
				out = append(out, e)
			}
			return true
		}
		if u := errors.Unwrap(err); u != nil {
			return walk(u)
		}
		return false
	}
	walk(err)
	return out
}

// valueProblem says why v does not fit key's type and what would.
func valueProblem(key string, v any, cause error) string {
	got := fmt.Sprintf("%v", v)
	if s, ok := v.(string); ok {
		got = fmt.Sprintf("%q", s)
	}
	t := keyType(reflect.TypeFor[Config](), strings.Split(key, "."))
	switch {
	case t == nil:
	case t == reflect.TypeFor[time.Duration]():
		return fmt.Sprintf("%s is not a duration: write a number with a unit, e.g. 500ms, 30s, 2m or 1h", got)
	case t.Kind() == reflect.Bool:
		return fmt.Sprintf("%s is not a boolean: write true or false", got)
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return fmt.Sprintf("%s is not a whole number: write digits only, e.g. 64", got)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return fmt.Sprintf("%s is not a number: write e.g. 0.5", got)
	case t.Kind() == reflect.String:
		return fmt.Sprintf("%s is not a string: write a single value, quoted if need be", got)
	case t.Kind() == reflect.Slice:
		return fmt.Sprintf("%s is not a list: write [a, b] (or, for a list of strings, \"a, b\")", got)
	case t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		return fmt.Sprintf("%s is not a table: write the keys below it, one a line", got)
	}
	return fmt.Sprintf("%s does not fit: %v", got, cause)
}

// keyType follows key's segments through t's koanf tags (a map's key takes
// one segment) to the type of the value, nil when the key is not in t.
func keyType(t reflect.Type, segs []string) reflect.Type {
	for _, seg := range segs {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			f, ok := fieldByTag(t, seg)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	return t
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if name == tag {
			return f, true
		}
		if f.Anonymous && name == "" {
			if g, ok := fieldByTag(f.Type, tag); ok {
				return g, true
			}
		}
	}
	return reflect.StructField{}, false
}

// suggestKey returns the schema key nearest to segs by edit distance
// (wildcards take the user's segments), "" when none is close enough to be
// what was meant.
func suggestKey(segs []string) string {
	key := strings.Join(segs, ".")
	best, bestD := "", 0
	for _, pat := range schema {
		ps := strings.Split(pat, ".")
		if len(ps) != len(segs) {
			continue
		}
		cand := strings.Join(fill(ps, segs), ".")
		d := editDistance(key, cand)
		if best == "" || d < bestD {
			best, bestD = cand, d
		}
	}
	if best == "" || bestD > max(2, len(segs[len(segs)-1])/3) {
		return ""
	}
	return best
}

// siblings lists the keys the schema has right below the longest prefix of
// segs it knows, for an unknown key with no close match.
func siblings(segs []string) (prefix string, names []string) {
	for n := len(segs) - 1; n >= 1; n-- {
		seen := map[string]bool{}
		for _, pat := range schema {
			ps := strings.Split(pat, ".")
			if len(ps) > n && matchKey(ps[:n], segs[:n]) && !seen[ps[n]] {
				seen[ps[n]] = true
				names = append(names, ps[n])
			}
		}
		if len(names) > 0 {
			return strings.Join(segs[:n], "."), names
		}
	}
	return "", nil
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (keys are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// SortErrors orders problems as a person reads the file: by line, those
// without one (environment, flags, whole-file) after, each group stable.
func SortErrors(errs []error) {
	line := func(err error) int {
		var e *Error
		if errors.As(err, &e) && e.Line > 0 {
			return e.Line
		}
		return 1 << 30
	}
	slices.SortStableFunc(errs, func(a, b error) int { return cmp.Compare(line(a), line(b)) })
}

// hostLabel is one label of a DNS name.
var hostLabel = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)

// grantHost reports whether h is an HTTP grant the plugin runtime matches:
// a DNS name or an IP address, with an optional port (1–65535), or
// "*." and a domain (any name below it, any port).
func grantHost(h string) bool {
	host := h
	if hp, port, err := net.SplitHostPort(h); err == nil {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return false
		}
		host = hp
	} else if strings.HasPrefix(h, "[") {
		return false // a bracketed IPv6 address without a port
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	host = strings.TrimPrefix(host, "*.")
	if host == "" || len(host) > 253 {
		return false
	}
	for _, l := range strings.Split(strings.TrimSuffix(host, "."), ".") {
		if !hostLabel.MatchString(l) {
			return false
		}
	}
	return true
}
