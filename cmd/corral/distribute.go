package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/oci"
	"github.com/corral-mcp/corral/host/trust"
)

// This file holds the registry commands of publishers and operators:
// push, pull and lock (docs/distribution.md).

const pushLong = `Push a plugin file to an OCI registry as a CNCF Wasm artifact (config
application/vnd.wasm.config.v0+json, one application/wasm layer), with the
signatures beside it (FILE.wasm.minisig, FILE.wasm.sigstore.json) attached as
OCI 1.1 referrers of its manifest. Credentials come from plugins.oci of
--config (CORRAL_PLUGINS_OCI_USERNAME / _PASSWORD) or a docker config.json.
Prints the digest to pin.`

func runPush(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin push", "corral plugin push [--config FILE] FILE.wasm oci://REGISTRY/REPO:TAG", pushLong)
	cfgFile := fs.String("config", "", "configuration `FILE` (YAML or TOML)")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return usageErr(e, fs, "want FILE.wasm and oci://REGISTRY/REPO:TAG")
	}
	cfg, err := config.Load(config.Source{File: *cfgFile})
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	ref, err := oci.ParseSource(pos[1])
	if err != nil {
		return fail(e, err)
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		return fail(e, err)
	}
	sigs, err := trust.ReadSiblings(pos[0])
	if err != nil {
		return fail(e, err)
	}
	d, err := client(cfg).Push(ctx, ref, data, sigs)
	if err != nil {
		return fail(e, err)
	}
	pinned := ref
	pinned.Digest = d
	fmt.Fprintf(e.stdout, "%s: pushed as %s (sha256 of the module %s)\n", pos[0], pinned, digestOf(data))
	if ref.Tag != "" {
		fmt.Fprintf(e.stdout, "%s: tagged %s\n", pos[0], ref.Tag)
	}
	for _, s := range []struct {
		name string
		b    []byte
	}{{"minisign signature", sigs.Minisig}, {"Sigstore bundle", sigs.Bundle}} {
		if s.b != nil {
			fmt.Fprintf(e.stdout, "%s: %s attached as a referrer\n", pos[0], s.name)
		}
	}
	if sigs.Empty() {
		fmt.Fprintf(e.stdout, "%s: unsigned (no .minisig or .sigstore.json beside it): a trust policy will refuse it\n", pos[0])
	}
	return exitOK
}

const pullLong = `Pull a plugin from an OCI registry into the store (plugins.store) with the
signatures attached to it, checking every byte against its digest, and check
the signature under the trust policy of --config (that of --plugin NAME, else
plugins.trust). With --out, also write the module (and its signatures beside
it) to FILE.wasm, ready for a plugin directory.`

func runPull(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin pull", "corral plugin pull [--config FILE] [--plugin NAME] [--out FILE.wasm] oci://REGISTRY/REPO(:TAG|@sha256:DIGEST)", pullLong)
	cfgFile := fs.String("config", "", "configuration `FILE` (YAML or TOML)")
	name := fs.String("plugin", "", "check the signature under the trust policy of plugin `NAME`")
	out := fs.String("out", "", "also write the module to `FILE.wasm`")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return usageErr(e, fs, "want one oci:// reference")
	}
	cfg, err := config.Load(config.Source{File: *cfgFile})
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	ref, err := oci.ParseSource(pos[0])
	if err != nil {
		return fail(e, err)
	}
	res, err := oci.NewResolver(cfg, nil)
	if err != nil {
		return fail(e, err)
	}
	a, err := res.Client.Pull(ctx, ref)
	if err != nil {
		return fail(e, err)
	}
	path, err := res.Store.Put(a)
	if err != nil {
		return fail(e, err)
	}
	pinned := ref
	pinned.Digest = a.Manifest
	fmt.Fprintf(e.stdout, "%s: pulled %s (module %s) into %s\n", pos[0], pinned, a.ModuleDigest, path)
	if ref.Tag != "" {
		if err := res.Store.RecordTag(ref, a.Manifest); err != nil {
			return fail(e, err)
		}
	}
	if *out != "" {
		if err := writeWithSignatures(*out, a.Module, a.Signatures); err != nil {
			return fail(e, err)
		}
		fmt.Fprintf(e.stdout, "%s: written to %s\n", pos[0], *out)
	}
	pols, err := trust.ForConfig(cfg)
	if err != nil {
		return fail(e, err)
	}
	p := pols.For(*name)
	if p == nil {
		fmt.Fprintf(e.stdout, "%s: no trust policy applies; signature not checked\n", pos[0])
		return exitOK
	}
	signer, err := p.Verify(a.Module, strings.TrimPrefix(a.ModuleDigest, "sha256:"), a.Signatures)
	if err != nil {
		fmt.Fprintf(e.stderr, "%s: refused: %v\n", pos[0], err)
		return exitFail
	}
	fmt.Fprintf(e.stdout, "%s: signed by %s\n", pos[0], signer)
	return exitOK
}

// writeWithSignatures writes a module and the signatures beside it.
func writeWithSignatures(path string, module []byte, sigs trust.Signatures) error {
	if err := os.WriteFile(path, module, 0o644); err != nil {
		return err
	}
	for _, s := range []struct {
		suffix string
		b      []byte
	}{{trust.MinisigSuffix, sigs.Minisig}, {trust.BundleSuffix, sigs.Bundle}} {
		if s.b == nil {
			continue
		}
		if err := os.WriteFile(path+s.suffix, s.b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

const lockLong = `Write the plugin lock of --config: every plugin.<name>.source is resolved now
(a tag to the digest it names), pulled into the store, checked like the server
checks it (its signature under the trust policy, then its manifest's name,
which must be <name>), and recorded: plugin name, source pinned by digest,
module sha256, signer. "corral serve" with plugins.lock set to the file serves
exactly that set. Exits 1, writing nothing, if any plugin fails.`

func runLock(ctx context.Context, e *env, args []string) int {
	fs := newFlags("plugin lock", "corral plugin lock --config FILE [--out corral.lock]", lockLong)
	cfgFile := fs.String("config", "", "configuration `FILE` (YAML or TOML)")
	outFile := fs.String("out", "corral.lock", "write the lock to `FILE`")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 || *cfgFile == "" {
		return usageErr(e, fs, "want --config and no arguments")
	}
	cfg, err := config.Load(config.Source{File: *cfgFile})
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	if cfg.Plugins.Lock != "" {
		return fail(e, fmt.Errorf("lock: %s sets plugins.lock; lock the configuration without it", *cfgFile))
	}
	// Every tag is resolved afresh: a lock records what the tags name now.
	fresh := *cfg
	fresh.Plugin = maps.Clone(cfg.Plugin)
	var names []string
	for name, p := range fresh.Plugin {
		if p.Source != "" {
			p.FollowTag = true
			fresh.Plugin[name] = p
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return fail(e, fmt.Errorf("lock: %s has no plugin.<name>.source to lock", *cfgFile))
	}
	slices.Sort(names)
	res, err := oci.NewResolver(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return fail(e, err)
	}
	bound, err := res.Bind(ctx, &fresh)
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	lock := &oci.Lock{Plugins: map[string]oci.LockEntry{}}
	var problems []error
	for _, name := range names {
		p := bound.Plugin[name]
		entry, err := lockEntry(ctx, bound, res, name, p)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		lock.Plugins[name] = entry
		fmt.Fprintf(e.stdout, "%s: %s (module %s, signer %s)\n", name, entry.Source, entry.Module, orNoneStr(entry.Signer))
	}
	if err := errors.Join(problems...); err != nil {
		printErrors(e, err)
		return exitFail
	}
	if err := lock.Write(*outFile); err != nil {
		return fail(e, err)
	}
	fmt.Fprintf(e.stdout, "wrote %s: %d plugins\n", *outFile, len(lock.Plugins))
	return exitOK
}

// lockEntry checks one resolved plugin as the server would (signature
// before compiling, then the manifest's name) and returns its entry.
func lockEntry(ctx context.Context, cfg *config.Config, res *oci.Resolver, name string, p config.Plugin) (oci.LockEntry, error) {
	ref, err := oci.ParseSource(p.Source)
	if err != nil {
		return oci.LockEntry{}, err
	}
	if ref.Digest == "" {
		ref.Digest = res.Store.Tag(ref)
	}
	data, err := os.ReadFile(p.File)
	if err != nil {
		return oci.LockEntry{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	chk, err := trustCheck(cfg, p.File, data, p.SHA256)
	if err != nil {
		return oci.LockEntry{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	m, err := inspect(ctx, p.File, data)
	if err != nil {
		return oci.LockEntry{}, fmt.Errorf("plugin %s: %w", name, err)
	}
	if m.Name != name {
		return oci.LockEntry{}, fmt.Errorf("plugin %s: the module at %s names itself %q in its manifest", name, ref, m.Name)
	}
	if err := chk.Check(name); err != nil {
		return oci.LockEntry{}, err
	}
	return oci.LockEntry{Source: ref.String(), Tag: ref.Tag, Module: "sha256:" + p.SHA256, Signer: chk.Signer()}, nil
}

// client is the registry client cfg configures.
func client(cfg *config.Config) *oci.Client {
	o := cfg.Plugins.OCI
	return &oci.Client{Username: o.Username, Password: o.Password, DockerConfig: o.DockerConfig, PlainHTTP: o.PlainHTTP}
}

func fail(e *env, err error) int {
	fmt.Fprintf(e.stderr, "corral: %v\n", err)
	return exitFail
}

func orNoneStr(s string) string {
	if s == "" {
		return "(no trust policy)"
	}
	return s
}

// bindSources binds every plugin source of cfg (and, with plugins.lock, the
// lock's set) to the module the store keeps for it, pulling what it lacks
// (oci.Resolver.Bind). A plugin whose source does not resolve is logged and
// serves nothing; a lock that cannot be read is an error.
func (a *App) bindSources(ctx context.Context, cfg *config.Config) (*config.Config, error) {
	if !cfg.HasSources() {
		return cfg, nil
	}
	res, err := oci.NewResolver(cfg, a.log)
	if err != nil {
		return cfg, err
	}
	bound, err := res.Bind(ctx, cfg)
	if bound == nil {
		return cfg, err
	}
	if err != nil {
		a.log.Error("plugin sources not resolved; those plugins serve nothing", "err", err)
	}
	if cfg.Plugins.Lock != "" {
		a.log.Info("serving the plugin lock; plugins.dir is not consulted", "lock", cfg.Plugins.Lock, "plugins", len(bound.Plugin))
	}
	return bound, nil
}
