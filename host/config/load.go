package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/toml/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/v2"
)

// Source says where a configuration comes from. Load merges, later winning:
// defaults, File, the environment, Flags.
type Source struct {
	// File is a YAML (.yaml, .yml) or TOML (.toml) file; "" uses none.
	File string
	// Environ lists KEY=value pairs; nil means os.Environ(). Only the
	// CORRAL_* variables documented in docs/configuration.md are read.
	Environ []string
	// Flags maps keys ("http.addr", "plugins.dir", …) to values the user
	// set on the command line. Keys not in the schema are an error.
	Flags map[string]any
	// WorkDir resolves relative paths from the environment and flags;
	// "" means the process's working directory.
	WorkDir string
}

// EnvPrefix starts every environment variable Load reads.
const EnvPrefix = "CORRAL_"

// Load builds and validates a Config from src. Every problem found is
// returned, joined, as an *Error naming its key.
func Load(src Source) (*Config, error) {
	wd := src.WorkDir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("config: working directory: %w", err)
		}
	}
	o := &origins{}
	var errs []error                          // every problem found, reported together
	secrets := map[string]map[string]string{} // plugin → config key → where its value came from
	k := koanf.New(".")
	if err := k.Load(confmap.Provider(defaults(), "."), nil); err != nil {
		return nil, fmt.Errorf("config: defaults: %w", err)
	}
	cfg := &Config{Dir: wd}

	if src.File != "" {
		abs, err := filepath.Abs(src.File)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		cfg.File, cfg.Dir = abs, filepath.Dir(abs)
		fk, err := loadFile(abs)
		if err != nil {
			return nil, err
		}
		o.file, o.fileKeys, o.data = abs, fk, nil
		if data, err := os.ReadFile(abs); err == nil {
			o.data = data
		}
		// An unknown key is reported and dropped, so that the values
		// after it are still checked: every problem of the file at once.
		for _, key := range fk.Keys() {
			if msg := checkKey(key); msg != "" {
				errs = append(errs, o.errorf(key, "%s", msg))
				fk.Delete(key)
			}
		}
		resolvePaths(fk, cfg.Dir)
		errs = append(errs, resolveSecrets(fk, cfg.Dir, environOf(src), o, secrets)...)
		if err := k.Merge(fk); err != nil {
			return nil, o.errorf("", "%v", err)
		}
	}

	ek := koanf.New(".")
	environ := environOf(src)
	o.env = map[string]string{}
	err := ek.Load(env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: func() []string { return environ },
		TransformFunc: func(name, value string) (string, any) {
			key, ok := envKeys()[name]
			if !ok {
				return "", nil
			}
			o.env[key] = name
			if listKeys[key] {
				return key, splitList(value)
			}
			return key, value
		},
	}), nil)
	if err != nil {
		return nil, fmt.Errorf("config: environment: %w", err)
	}
	resolvePaths(ek, wd)
	if err := k.Merge(ek); err != nil {
		return nil, fmt.Errorf("config: environment: %w", err)
	}

	if len(src.Flags) > 0 {
		fl := koanf.New(".")
		if err := fl.Load(confmap.Provider(src.Flags, "."), nil); err != nil {
			return nil, fmt.Errorf("config: flags: %w", err)
		}
		o.flags = map[string]bool{}
		for _, key := range fl.Keys() {
			if msg := checkKey(key); msg != "" {
				return nil, fmt.Errorf("config: flag for %s: %s", key, msg)
			}
			o.flags[key] = true
		}
		resolvePaths(fl, wd)
		if err := k.Merge(fl); err != nil {
			return nil, fmt.Errorf("config: flags: %w", err)
		}
	}

	// A value of the wrong type is reported with the form its key takes;
	// the keys that decoded are validated all the same (not those that
	// failed, whose zero value would only repeat the problem).
	failed := map[string]bool{}
	if err := decode(k, cfg); err != nil {
		ps, ok := decodeProblems(err, k)
		if !ok {
			return nil, errors.Join(append(errs, o.errorf("", "%v", err))...)
		}
		for _, p := range ps {
			if !k.Exists(p.key) {
				// A value an entry took from plugins.limits: reported
				// once, at that key.
				continue
			}
			failed[p.key] = true
			errs = append(errs, o.errorf(p.key, "%s", p.msg))
			k.Delete(p.key)
		}
		// Again without them: a plugin entry with a bad value would
		// otherwise not decode at all, and its other values go unchecked.
		cfg = &Config{File: cfg.File, Dir: cfg.Dir}
		if err := decode(k, cfg); err != nil {
			return nil, errors.Join(append(errs, o.errorf("", "%v", err))...)
		}
	}
	for _, p := range validate(cfg) {
		if !failed[p.key] {
			errs = append(errs, o.errorf(p.key, "%s", p.msg))
		}
	}
	if len(errs) > 0 {
		SortErrors(errs)
		return nil, errors.Join(errs...)
	}
	for name, keys := range secrets {
		if p, ok := cfg.Plugin[name]; ok {
			p.Grants.Secret = keys
			cfg.Plugin[name] = p
		}
	}
	cfg.origins = o
	return cfg, nil
}

// loadFile parses a YAML or TOML file into its own koanf tree.
func loadFile(path string) (*koanf.Koanf, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read", Err: err}
	}
	var parser koanf.Parser
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		parser = yaml.Parser()
	case ".toml":
		parser = toml.Parser()
	default:
		return nil, &Error{File: path, Msg: "unknown format: the file name must end in .yaml, .yml or .toml"}
	}
	m, err := parser.Unmarshal(data)
	if err != nil {
		return nil, &Error{File: path, Line: parseErrorLine(err), Msg: "cannot parse", Err: err}
	}
	fk := koanf.New(".")
	if err := fk.Load(confmap.Provider(m, ""), nil); err != nil {
		return nil, &Error{File: path, Msg: "cannot load", Err: err}
	}
	return fk, nil
}

// decode unmarshals the merged tree into cfg, failing on values of the
// wrong type. Every plugin entry takes the values it leaves out
// (fillEntries) on the way, in the copy being decoded rather than in k,
// where a merge costs the size of the whole configuration.
func decode(k *koanf.Koanf, cfg *Config) error {
	tree := k.Raw()
	fillEntries(tree)
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			mapstructure.StringToTimeDurationHookFunc(),
			stringToSliceHook,
		),
		WeaklyTypedInput: true,
		TagName:          "koanf",
		Result:           cfg,
	})
	if err != nil {
		return err
	}
	return d.Decode(tree)
}

// fillEntries gives every plugin entry of tree (a configuration as nested
// maps) the keys it leaves out: enabled, engine and grants.kvQuota their
// built-in defaults, every limit the value of plugins.limits (the built-in
// one where that was dropped for being of the wrong type).
func fillEntries(tree map[string]any) {
	entries, _ := tree["plugin"].(map[string]any)
	if len(entries) == 0 {
		return
	}
	limits := limitDefaults()
	if plugins, ok := tree["plugins"].(map[string]any); ok {
		if l, ok := plugins["limits"].(map[string]any); ok {
			maps.Copy(limits, l)
		}
	}
	for name, e := range entries {
		if e == nil {
			e = map[string]any{} // an entry with no keys
			entries[name] = e
		}
		entry, ok := e.(map[string]any)
		if !ok {
			continue // not a table: the decode reports it
		}
		setDefaults(entry, map[string]any{"enabled": defaultPluginEnabled, "engine": ""})
		if g := subTree(entry, "grants"); g != nil {
			setDefaults(g, map[string]any{"kvQuota": defaultKVQuota})
		}
		if l := subTree(entry, "limits"); l != nil {
			setDefaults(l, limits)
		}
	}
}

// subTree returns the table at m[key], a new one when there is none, nil
// when the value is not a table.
func subTree(m map[string]any, key string) map[string]any {
	v, ok := m[key]
	if !ok || v == nil {
		t := map[string]any{}
		m[key] = t
		return t
	}
	t, _ := v.(map[string]any)
	return t
}

// setDefaults sets every key of defs that m lacks.
func setDefaults(m, defs map[string]any) {
	for key, v := range defs {
		if _, ok := m[key]; !ok {
			m[key] = v
		}
	}
}

// stringToSliceHook lets a single string stand for a one-element list.
func stringToSliceHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() == reflect.String && to.Kind() == reflect.Slice {
		return splitList(data.(string)), nil
	}
	return data, nil
}

// decodeKey turns a mapstructure field name ("plugin[files].limits.timeout")
// into a config key ("plugin.files.limits.timeout").
func decodeKey(name string) string {
	name = strings.ReplaceAll(name, "[", ".")
	name = strings.ReplaceAll(name, "]", "")
	return name
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// schema lists every key; "*" matches one segment (a plugin name or a
// config value name).
var schema = []string{
	"http.addr", "http.allowedOrigins", "http.allowedHosts", "http.maxBodyBytes",
	"http.trustedProxies", "http.forwardedHeader",
	"http.readHeaderTimeout", "http.readBodyTimeout", "http.drainDelay", "http.maxConcurrentPerPrincipal", "http.maxConcurrentPerAddress",
	"http.maxListensPerClient", "http.maxSessions", "http.maxSessionsPerClient",
	"ws.addr", "admin.addr",
	"log.level", "log.format",
	"catalog.pageSize", "catalog.cursorKey", "catalog.listBudget", "catalog.listCacheBytes",
	"plugins.dir", "plugins.dataDir", "plugins.cacheDir", "plugins.engine", "plugins.debounce", "plugins.rescan",
	"plugins.compile.maxFileBytes", "plugins.compile.maxFunctions", "plugins.compile.maxFunctionBytes",
	"plugins.compile.maxNesting", "plugins.compile.maxLocals", "plugins.compile.timeout", "plugins.compile.workers",
	"plugins.limits.timeout", "plugins.limits.memoryPages", "plugins.limits.instances", "plugins.limits.idleTimeout", "plugins.limits.sleepAfter",
	"plugins.limits.maxRequestBytes", "plugins.limits.maxResponseBytes",
	"plugins.limits.quarantineAfter",
	"plugins.limits.httpMaxHeaders", "plugins.limits.httpMaxHeaderBytes",
	"plugin.*.enabled", "plugin.*.file", "plugin.*.sha256", "plugin.*.engine",
	"plugin.*.grants.log", "plugin.*.grants.notify", "plugin.*.grants.kv", "plugin.*.grants.kvQuota",
	"plugin.*.grants.files", "plugin.*.grants.http.hosts", "plugin.*.grants.http.allowPrivate",
	"plugin.*.grants.config.*", "plugin.*.grants.config.*.env", "plugin.*.grants.config.*.file",
	"plugin.*.limits.timeout", "plugin.*.limits.memoryPages", "plugin.*.limits.instances", "plugin.*.limits.idleTimeout", "plugin.*.limits.sleepAfter",
	"plugin.*.limits.maxRequestBytes", "plugin.*.limits.maxResponseBytes",
	"plugin.*.limits.quarantineAfter",
	"plugin.*.limits.httpMaxHeaders", "plugin.*.limits.httpMaxHeaderBytes",
}

func init() {
	schema = append(schema, authKeys...)
	schema = append(schema, keysKeys...)
	schema = append(schema, clusterKeys...)
	schema = append(schema, traceKeys...)
	schema = append(schema, metricsKeys...)
	listKeys["cluster.nats"] = true
	for _, k := range authListKeys {
		listKeys[k] = true
	}
}

// listKeys are the keys whose values are lists.
var listKeys = map[string]bool{"http.allowedOrigins": true, "http.allowedHosts": true, "http.trustedProxies": true}

// Keys returns every global key (not per-plugin ones) and its environment
// variable, in schema order.
func Keys() [][2]string {
	var out [][2]string
	for _, key := range schema {
		if !strings.Contains(key, "*") {
			out = append(out, [2]string{key, envName(key)})
		}
	}
	return out
}

func envKeys() map[string]string {
	m := map[string]string{}
	for _, kv := range Keys() {
		m[kv[1]] = kv[0]
	}
	return m
}

// envName maps "plugins.dataDir" to "CORRAL_PLUGINS_DATA_DIR".
func envName(key string) string {
	var b strings.Builder
	b.WriteString(EnvPrefix)
	for i, r := range key {
		switch {
		case r == '.':
			b.WriteByte('_')
		case unicode.IsUpper(r) && i > 0:
			b.WriteByte('_')
			b.WriteRune(r)
		default:
			b.WriteRune(unicode.ToUpper(r))
		}
	}
	return b.String()
}

// checkKey returns why key is not a valid leaf key, or "".
func checkKey(key string) string {
	segs := strings.Split(key, ".")
	for _, pat := range schema {
		if matchKey(strings.Split(pat, "."), segs) {
			return ""
		}
	}
	for _, pat := range schema {
		ps := strings.Split(pat, ".")
		if len(ps) > len(segs) && matchKey(ps[:len(segs)], segs) {
			return "must be a table of keys, not a single value"
		}
	}
	for _, pat := range schema {
		ps := strings.Split(pat, ".")
		if len(ps) == len(segs) && matchFold(ps, segs) {
			return fmt.Sprintf("unknown key (did you mean %q? keys are case-sensitive)",
				strings.Join(fill(ps, segs), "."))
		}
	}
	if s := suggestKey(segs); s != "" {
		return fmt.Sprintf("unknown key (did you mean %q?)", s)
	}
	if prefix, names := siblings(segs); prefix != "" {
		return fmt.Sprintf("unknown key (the keys under %s are: %s)", prefix, strings.Join(names, ", "))
	}
	return "unknown key"
}

func matchKey(pat, segs []string) bool {
	if len(pat) != len(segs) {
		return false
	}
	for i := range pat {
		if pat[i] != "*" && pat[i] != segs[i] {
			return false
		}
	}
	return true
}

func matchFold(pat, segs []string) bool {
	for i := range pat {
		if pat[i] != "*" && !strings.EqualFold(pat[i], segs[i]) {
			return false
		}
	}
	return true
}

func fill(pat, segs []string) []string {
	out := slices.Clone(pat)
	for i := range out {
		if out[i] == "*" {
			out[i] = segs[i]
		}
	}
	return out
}

// resolvePaths makes the path values in k absolute against base.
func resolvePaths(k *koanf.Koanf, base string) {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(base, p)
	}
	absList := func(key string) {
		switch v := k.Get(key).(type) {
		case string:
			_ = k.Set(key, []any{abs(v)})
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				if s, ok := e.(string); ok {
					out[i] = abs(s)
				} else {
					out[i] = e
				}
			}
			_ = k.Set(key, out)
		}
	}
	for _, key := range append([]string{"plugins.dir", "plugins.dataDir", "plugins.cacheDir", "auth.jwt.jwksFile", "keys.secretFile", "keys.previousFile",
		"cluster.credsFile", "cluster.tls.ca", "cluster.tls.cert", "cluster.tls.key",
		"plugins.trust.trustedRoot", "plugins.store", "plugins.lock", "plugins.oci.dockerConfig"}, opsPaths...) {
		if v, ok := k.Get(key).(string); ok {
			_ = k.Set(key, abs(v))
		}
	}
	absList("plugins.trust.sigstoreKeys")
	for _, name := range k.MapKeys("plugin") {
		if v, ok := k.Get("plugin." + name + ".trust.trustedRoot").(string); ok {
			_ = k.Set("plugin."+name+".trust.trustedRoot", abs(v))
		}
		absList("plugin." + name + ".trust.sigstoreKeys")
		if v, ok := k.Get("plugin." + name + ".file").(string); ok {
			_ = k.Set("plugin."+name+".file", abs(v))
		}
		absList("plugin." + name + ".grants.files")
	}
}

// origins remembers which layer set each key, to name it in errors.
type origins struct {
	file     string
	data     []byte
	fileKeys *koanf.Koanf
	env      map[string]string
	flags    map[string]bool
}

func (o *origins) errorf(key, format string, args ...any) *Error {
	e := &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
	switch {
	case key != "" && o.flags[key]:
		e.Source = "flag"
	case key != "" && o.env[key] != "":
		e.Source = "env " + o.env[key]
	case o.file != "" && (key == "" || o.fileKeys.Exists(key) || !hasEnvOrFlag(o, key)):
		e.File = o.file
		if key != "" {
			e.Line = keyLine(o.file, o.data, key)
		}
	}
	return e
}

func hasEnvOrFlag(o *origins, key string) bool {
	return o.flags[key] || o.env[key] != ""
}

// environOf returns the environment Load reads: src.Environ, or the
// process's.
func environOf(src Source) []string {
	if src.Environ == nil {
		return os.Environ()
	}
	return src.Environ
}
