package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
	"github.com/corral-mcp/corral/host/registry"
)

const pluginLong = `Work with one plugin file.

  inspect [--json] FILE.wasm      print the manifest: claims and requested capabilities
  check [--config FILE] FILE.wasm load it in the sandbox with its configured grants and
                                  limits, list everything it serves, report problems
  new NAME --lang LANG [DIR]      write a new plugin project (go, c, assemblyscript, rust)
  publish [--config FILE] FILE.wasm  add or replace a plugin in the cluster's plugin bucket
  unpublish [--config FILE] NAME     remove a plugin from the cluster's plugin bucket
` + supplyUsage

func runPlugin(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin", "corral plugin <subcommand> [flags] ARGS", pluginLong)
	if len(args) == 0 {
		return usageErr(e, fs, "missing subcommand")
	}
	switch {
	case isHelp(args[0]):
		fs.SetOutput(e.stdout)
		fs.Usage()
		return exitOK
	case args[0] == "inspect":
		return runInspect(ctx, e, args[1:])
	case args[0] == "check":
		return runCheck(ctx, e, args[1:])
	case args[0] == "new":
		return runNew(ctx, e, args[1:])
	case args[0] == "publish":
		return runPublish(ctx, e, args[1:])
	case args[0] == "unpublish":
		return runUnpublish(ctx, e, args[1:])
	}
	if run, ok := supplyCommands[args[0]]; ok {
		return run(ctx, e, args[1:])
	}
	return usageErr(e, fs, "unknown subcommand %q", args[0])
}

func runInspect(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin inspect", "corral plugin inspect [--json] FILE.wasm",
		`Print a plugin's manifest, obtained by running it in the sandbox with no
capabilities. CORRAL_PLUGINS_CACHE_DIR names a compilation cache to use.`)
	asJSON := fs.Bool("json", false, "print the manifest as JSON")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE.wasm")
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	m, err := inspect(ctx, pos[0], data)
	if err != nil {
		fmt.Fprintf(e.stderr, "corral: %s: %v\n", pos[0], err)
		return exitFail
	}
	if *asJSON {
		out, _ := json.MarshalIndent(struct {
			SHA256 string `json:"sha256"`
			*abi.Manifest
		}{digestOf(data), m}, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
		return exitOK
	}
	printManifest(e, m, digestOf(data))
	return exitOK
}

// inspect reads a plugin's manifest by running it with no capabilities,
// using the compilation cache named by CORRAL_PLUGINS_CACHE_DIR if any.
func inspect(ctx context.Context, path string, data []byte) (*abi.Manifest, error) {
	cfg, err := config.Load(config.Source{})
	if err != nil {
		return nil, err
	}
	return inspectWith(ctx, cfg, path, data)
}

// inspectWith is inspect with the compilation cache, engine and compile
// limits of cfg.
func inspectWith(ctx context.Context, cfg *config.Config, path string, data []byte) (*abi.Manifest, error) {
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: cfg.Plugins.CacheDir, Engine: cfg.Plugins.Engine,
		Compile: registry.CompileLimits(cfg.Plugins.Compile)})
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	defer rt.Close(ctx)
	mod, err := registry.WasmLoader(rt).Compile(ctx, path, data, "", probeSettings(cfg, path, digestOf(data)))
	if err != nil {
		return nil, err
	}
	defer mod.Close(ctx)
	return mod.Manifest(), nil
}

func printManifest(e *env, m *abi.Manifest, digest string) {
	w := e.stdout
	fmt.Fprintf(w, "name:         %s\n", m.Name)
	fmt.Fprintf(w, "version:      %s\n", m.Version)
	if m.Title != "" {
		fmt.Fprintf(w, "title:        %s\n", m.Title)
	}
	if m.Description != "" {
		fmt.Fprintf(w, "description:  %s\n", m.Description)
	}
	fmt.Fprintf(w, "abi:          %d\n", m.ABI)
	fmt.Fprintf(w, "sha256:       %s\n", digest)
	var caps []string
	for _, c := range m.Capabilities {
		if slices.Contains(m.RequiredCapabilities, c) {
			c += " (required)"
		}
		caps = append(caps, c)
	}
	fmt.Fprintf(w, "capabilities: %s\n", orNone(caps))
	fmt.Fprintf(w, "schemes:      %s\n", orNone(m.Schemes))
	if m.ListsResources {
		fmt.Fprintf(w, "lists resources dynamically\n")
	}
	section := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "%s (%d):\n", title, len(items))
		for _, it := range items {
			fmt.Fprintf(w, "  %s\n", it)
		}
	}
	var rs, ts, ps, tools []string
	for _, r := range m.Resources {
		rs = append(rs, r.URI+describe(r.Description))
	}
	for _, t := range m.Templates {
		ts = append(ts, t.URITemplate+describe(t.Description))
	}
	for _, p := range m.Prompts {
		var args []string
		for _, a := range p.Arguments {
			n := a.Name
			if !a.Required {
				n += "?"
			}
			args = append(args, n)
		}
		ps = append(ps, p.Name+"("+strings.Join(args, ", ")+")"+describe(p.Description))
	}
	for _, t := range m.Tools {
		tools = append(tools, t.Name+describe(t.Description))
	}
	section("resources", rs)
	section("resource templates", ts)
	section("prompts", ps)
	section("tools", tools)
}

func describe(s string) string {
	if s == "" {
		return ""
	}
	return "  — " + s
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

func runCheck(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin check", "corral plugin check [--config FILE] FILE.wasm", `
Load a plugin in the sandbox exactly as "corral serve" would: with the grants and
limits of its entry in the configuration (none without --config), its binding
(plugin.<name>.file, sha256), its signature under the trust policy
(plugins.trust, plugin.<name>.trust) and its claims settled against the plugins of
plugins.dir. A file outside the directory is judged where it would be deployed:
in place of the directory's file of the same plugin, else at the path its
binding names. Every requested capability that is not granted is printed with
the key that grants it. Then list everything it serves through the catalog,
which validates the plugin's output. Problems (a refusal, a required capability
not granted, invalid output) are printed and the exit code is 1 if there is any.`)
	cfgFile := fs.String("config", "", "configuration `FILE` (YAML or TOML)")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want exactly one FILE.wasm")
	}
	cfg, err := config.Load(config.Source{File: *cfgFile})
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	problems := checkPlugin(ctx, e, cfg, pos[0])
	for _, p := range problems {
		fmt.Fprintf(e.stderr, "%s: %s\n", pos[0], p)
	}
	if len(problems) > 0 {
		return exitFail
	}
	fmt.Fprintf(e.stdout, "%s: ok\n", pos[0])
	return exitOK
}

// checkPlugin loads path as serve would and returns the problems found.
func checkPlugin(ctx context.Context, e *env, cfg *config.Config, path string) []string {
	abs, _ := filepath.Abs(path)
	data, err := os.ReadFile(abs)
	if err != nil {
		return []string{err.Error()}
	}
	rt, err := plugin.NewRuntime(ctx, plugin.RuntimeConfig{CacheDir: cfg.Plugins.CacheDir, Engine: cfg.Plugins.Engine,
		Compile: registry.CompileLimits(cfg.Plugins.Compile)})
	if err != nil {
		return []string{"runtime: " + err.Error()}
	}
	defer rt.Close(ctx)
	digest := digestOf(data)
	chk, err := trustCheck(cfg, abs, data, digest)
	if err != nil {
		return []string{"refused: " + err.Error()}
	}
	mod, err := registry.WasmLoader(rt).Compile(ctx, abs, data, digest, probeSettings(cfg, abs, digest))
	if err != nil {
		// Each line already starts with the file: do not name it twice.
		var pe *plugin.Error
		if errors.As(err, &pe) && pe.Plugin == abs && pe.Err != nil {
			return []string{string(pe.Class) + ": " + pe.Err.Error()}
		}
		return []string{err.Error()}
	}
	defer mod.Close(ctx)
	m := mod.Manifest()
	if err := chk.Check(m.Name); err != nil {
		return []string{"refused: " + err.Error()}
	}
	if s := chk.Signer(); s != "" {
		fmt.Fprintf(e.stdout, "%s: signed by %s\n", path, s)
	}
	settings := cfg.PluginSettings(m.Name)
	problems := checkSettlement(ctx, e, rt, cfg, abs, digest, m)
	if !settings.Enabled {
		fmt.Fprintf(e.stdout, "%s: plugin %s is disabled in the configuration (checked anyway)\n", path, m.Name)
	}
	for _, u := range registry.UngrantedOf(m, settings) {
		if u.Required {
			problems = append(problems, fmt.Sprintf("required capability %q is not granted (grant it with %s)", u.Capability, u.Key))
			continue
		}
		fmt.Fprintf(e.stdout, "%s: note: optional capability %q is not granted (grant it with %s)\n", path, u.Capability, u.Key)
	}
	p, err := mod.Instantiate(ctx, settings)
	if err != nil {
		return append(problems, "load: "+err.Error())
	}
	defer p.Close(ctx)
	set, err := catalog.NewSet([]catalog.Provider{p}, catalog.Options{PageSize: cfg.Catalog.PageSize})
	if err != nil {
		return append(problems, err.Error())
	}
	for _, kind := range []catalog.ListKind{catalog.ListResources, catalog.ListTemplates, catalog.ListPrompts, catalog.ListTools} {
		n, err := countList(ctx, set, kind)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s/list: %v", kind, err))
			continue
		}
		fmt.Fprintf(e.stdout, "%s: %s: %d\n", path, kind, n)
	}
	slices.Sort(problems)
	return problems
}

// checkSettlement reports what the server would decide for the file next
// to the plugins it would serve from plugins.dir: a binding the file does
// not match, or a claim conflict it loses (registry.Settle). A file outside
// the directory is judged where it would be deployed: in place of the
// directory's file with the same plugin name, else at the path its
// binding names, else under its own base name.
func checkSettlement(ctx context.Context, e *env, rt *plugin.Runtime, cfg *config.Config, self, digest string, m *abi.Manifest) []string {
	dir := cfg.Plugins.Dir
	inDir := dir != "" && filepath.Dir(self) == filepath.Clean(dir)
	var cands []registry.Candidate
	target := ""
	entries, _ := os.ReadDir(dir) // no directory yet: nothing to conflict with
	for _, de := range entries {
		path := filepath.Join(dir, de.Name())
		if !strings.HasSuffix(de.Name(), ".wasm") || strings.HasPrefix(de.Name(), ".") || path == self {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		digest := digestOf(data)
		mod, err := registry.WasmLoader(rt).Compile(ctx, path, data, digest, probeSettings(cfg, path, digest))
		if err != nil {
			continue // serve would not load it either
		}
		om := mod.Manifest()
		mod.Close(ctx)
		if !inDir && om.Name == m.Name && target == "" {
			target = path // the version this file would replace
			continue
		}
		cands = append(cands, registry.Candidate{Path: path, Digest: digest, Manifest: om})
	}
	switch b := cfg.PluginSettings(m.Name).Binding; {
	case target != "":
	case inDir || dir == "":
		target = self
	case b.File != "":
		target = b.File
	default:
		target = filepath.Join(dir, filepath.Base(self))
	}
	if target != self {
		fmt.Fprintf(e.stdout, "%s: judged as %s\n", self, target)
	}
	b := cfg.PluginSettings(m.Name).Binding
	if b.Bound() {
		fmt.Fprintf(e.stdout, "%s: plugin %s is bound by the configuration (%s)\n", self, m.Name, bindingOf(b))
	}
	refused := registry.Settle(cfg, append(cands, registry.Candidate{Path: target, Digest: digest, Manifest: m}))
	if err := refused[target]; err != nil {
		return []string{"refused: " + err.Error()}
	}
	return nil
}

// bindingOf describes a binding for people.
func bindingOf(b config.Binding) string {
	var parts []string
	if b.File != "" {
		parts = append(parts, "file "+b.File)
	}
	if b.SHA256 != "" {
		parts = append(parts, "sha256 "+b.SHA256)
	}
	return strings.Join(parts, ", ")
}

// countList walks every page of a list (at most 10,000 pages or 30s).
func countList(ctx context.Context, set *catalog.Set, kind catalog.ListKind) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, cursor := 0, ""
	for range 10000 {
		page, err := set.List(ctx, catalog.Request{Principal: catalog.Anonymous()}, kind, cursor)
		if err != nil {
			return n, err
		}
		if len(page.Skipped) > 0 { // a server leaves the page out; check says why
			sk := page.Skipped[0]
			return n, fmt.Errorf("plugin %s: its page is left out (%s): %w", sk.Plugin, sk.Reason, sk.Err)
		}
		n += len(page.Items)
		if page.NextCursor == nil {
			return n, nil
		}
		cursor = *page.NextCursor
	}
	return n, fmt.Errorf("more than 10000 pages")
}

// digestOf is the lowercase hex sha256 of a plugin file.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// probeSettings are the settings the file's first instance runs under, as
// in serve.
func probeSettings(cfg *config.Config, path, digest string) config.Plugin {
	return cfg.ProbeSettings(cfg.Bindings().BoundName(path, digest))
}
