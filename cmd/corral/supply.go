package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"aead.dev/minisign"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/registry"
	"github.com/corral-mcp/corral/host/trust"
)

// trustCheck starts the check of a plugin file's signature as the
// registry makes it, and applies it before compiling: the policy of the
// plugin the configuration binds the file to, else the one any file must
// satisfy before its manifest is known (trust.Policies.Unknown).
func trustCheck(cfg *config.Config, path string, data []byte, digest string) (*registry.TrustCheck, error) {
	pols, err := trust.ForConfig(cfg)
	if err != nil {
		return nil, err
	}
	chk, err := registry.NewTrustCheck(pols, path, data, digest)
	if err != nil {
		return nil, err
	}
	return chk, chk.Check(cfg.Bindings().BoundName(path, digest))
}

const signLong = `Sign plugin files with a minisign (Ed25519) secret key: each FILE.wasm gets a
FILE.wasm.minisig beside it, the signature the server checks under a trust
policy (plugins.trust.minisign). A key encrypted with a password (minisign -G)
is decrypted with the password in CORRAL_SIGN_PASSWORD; one made with
minisign -G -W needs none. The signature's trusted comment names the file and
its sha256.`

func runSign(_ context.Context, e *env, args []string) int {
	fs := newFlags("plugin sign", "corral plugin sign --key FILE.key FILE.wasm...", signLong)
	keyFile := fs.String("key", "", "minisign secret key `FILE`")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if *keyFile == "" || len(pos) == 0 {
		return usageErr(e, fs, "want --key and at least one FILE.wasm")
	}
	key, err := readSecretKey(*keyFile)
	if err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	for _, path := range pos {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(e.stderr, "corral: %v\n", err)
			return exitFail
		}
		comment := fmt.Sprintf("file:%s sha256:%s", filepath.Base(path), digestOf(data))
		// Pre-hashed (BLAKE2b-512, as the minisign tool signs by default).
		r := minisign.NewReader(bytes.NewReader(data))
		if _, err := io.Copy(io.Discard, r); err != nil {
			return fail(e, err)
		}
		sig := r.SignWithComments(key, comment, "corral plugin signature")
		if err := os.WriteFile(path+trust.MinisigSuffix, sig, 0o644); err != nil {
			fmt.Fprintf(e.stderr, "corral: %v\n", err)
			return exitFail
		}
		fmt.Fprintf(e.stdout, "%s: signed with minisign key %016X: %s\n", path, key.ID(), path+trust.MinisigSuffix)
	}
	return exitOK
}

// readSecretKey reads a minisign secret key file, decrypting it with
// CORRAL_SIGN_PASSWORD when it is encrypted.
func readSecretKey(file string) (minisign.PrivateKey, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return minisign.PrivateKey{}, fmt.Errorf("sign: %w", err)
	}
	var key minisign.PrivateKey
	if err := key.UnmarshalText(b); err == nil {
		return key, nil
	}
	pw := os.Getenv("CORRAL_SIGN_PASSWORD")
	if pw == "" {
		return key, fmt.Errorf("sign: %s is encrypted: set CORRAL_SIGN_PASSWORD to its password", file)
	}
	if key, err = minisign.DecryptKey(pw, b); err != nil {
		return key, fmt.Errorf("sign: %s: %w", file, err)
	}
	return key, nil
}

const verifyLong = `Check the signature beside each FILE.wasm (FILE.wasm.minisig or
FILE.wasm.sigstore.json) as "corral serve" would, without compiling it: under
the trust policy of --config (that of --plugin NAME, or of the plugin the
configuration binds the file to, else plugins.trust), or, with --key, trusting
exactly the minisign public keys given (the RW... line, or a .pub file).
Prints the signer of each file, or why it is refused; exits 1 if any is.`

func runVerify(_ context.Context, e *env, args []string) int {
	fs := newFlags("plugin verify", "corral plugin verify [--config FILE] [--plugin NAME] [--key PUB]... FILE.wasm...", verifyLong)
	cfgFile := fs.String("config", "", "configuration `FILE` (YAML or TOML)")
	name := fs.String("plugin", "", "apply the trust policy of plugin `NAME`")
	var keys stringList
	fs.Var(&keys, "key", "trust this minisign public `KEY` (RW... or a .pub file); repeatable")
	pos, code, ok := parse(e, fs, args)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		return usageErr(e, fs, "want at least one FILE.wasm")
	}
	cfg, err := config.Load(config.Source{File: *cfgFile})
	if err != nil {
		printErrors(e, err)
		return exitFail
	}
	var pols *trust.Policies
	if len(keys) > 0 {
		t := config.Trust{}
		for _, k := range keys {
			pub, err := publicKey(k)
			if err != nil {
				fmt.Fprintf(e.stderr, "corral: %v\n", err)
				return exitFail
			}
			t.Minisign = append(t.Minisign, pub)
		}
		c := *cfg
		c.Plugins.Trust, c.Plugin = t, nil
		cfg = &c
	}
	if pols, err = trust.ForConfig(cfg); err != nil {
		fmt.Fprintf(e.stderr, "corral: %v\n", err)
		return exitFail
	}
	failed := false
	for _, path := range pos {
		abs, _ := filepath.Abs(path)
		data, err := os.ReadFile(abs)
		if err != nil {
			fmt.Fprintf(e.stderr, "corral: %v\n", err)
			failed = true
			continue
		}
		n := *name
		if n == "" {
			n = cfg.Bindings().BoundName(abs, digestOf(data))
		}
		p := pols.For(n)
		if p == nil {
			fmt.Fprintf(e.stderr, "%s: no trust policy applies (set plugins.trust, plugin.<name>.trust or --key)\n", path)
			failed = true
			continue
		}
		sigs, err := trust.ReadSiblings(abs)
		if err == nil {
			var signer string
			if signer, err = p.Verify(data, digestOf(data), sigs); err == nil {
				fmt.Fprintf(e.stdout, "%s: ok: signed by %s (sha256 %s)\n", path, signer, digestOf(data))
				continue
			}
		}
		fmt.Fprintf(e.stderr, "%s: refused: %v\n", path, err)
		failed = true
	}
	if failed {
		return exitFail
	}
	return exitOK
}

// publicKey returns a minisign public key given as its RW... line or as
// the path of a .pub file.
func publicKey(k string) (string, error) {
	if strings.HasPrefix(k, "RW") && !strings.ContainsRune(k, os.PathSeparator) {
		return k, nil
	}
	pub, err := minisign.PublicKeyFromFile(k)
	if err != nil {
		return "", fmt.Errorf("verify: %s: %w", k, err)
	}
	return pub.String(), nil
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

// supplyCommands are the plugin subcommands of publishers and operators
// (docs/distribution.md).
var supplyCommands = map[string]func(context.Context, *env, []string) int{
	"sign":   runSign,
	"verify": runVerify,
	"push":   runPush,
	"pull":   runPull,
	"lock":   runLock,
}

const supplyUsage = `  sign --key FILE.key FILE.wasm... sign with a minisign key (FILE.wasm.minisig)
  verify [--config FILE] FILE.wasm  check the signature beside it under the trust policy
  push FILE.wasm oci://REG/REPO:TAG push it, its signatures as referrers
  pull oci://REG/REPO@sha256:...    pull into the store, check digest and signature
  lock --config FILE                pin every plugin.<name>.source in a lock file`
