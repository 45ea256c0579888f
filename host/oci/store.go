package oci

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/corral-mcp/corral/host/internal/atomicfile"
	"github.com/corral-mcp/corral/host/trust"
)

// Store keeps pulled plugins on disk by digest:
//
//	DIR/modules/<sha256>.wasm            the module, named by its own digest,
//	DIR/modules/<sha256>.wasm.minisig    with the signatures found as referrers
//	DIR/modules/<sha256>.wasm.sigstore.json
//	DIR/manifests/<sha256>.json          manifest digest → module digest
//	DIR/tags/<registry>/<repo>/<tag>     the manifest digest a tag was resolved to
//
// Every file is written to a temporary name and renamed, so a crash
// leaves the previous content or the new one, never a part.
type Store struct{ dir string }

// OpenStore returns the store in dir, creating it if needed.
func OpenStore(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("oci: no store directory (plugins.store)")
	}
	if err := os.MkdirAll(filepath.Join(dir, "modules"), 0o755); err != nil {
		return nil, fmt.Errorf("oci: store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

// ModulePath is where the store keeps the module with sha256 hex digest.
func (s *Store) ModulePath(moduleHex string) string {
	return filepath.Join(s.dir, "modules", moduleHex+".wasm")
}

// stored is a manifest's record.
type stored struct {
	Module string `json:"module"` // "sha256:…" of the module
}

// Put keeps a pulled artifact: its module (checked once more against its
// digest), its signatures (replacing those kept before: the registry's
// are the current ones) and the record of its manifest. It returns the
// module's path.
func (s *Store) Put(a Artifact) (string, error) {
	sum := sha256.Sum256(a.Module)
	hexSum := hex.EncodeToString(sum[:])
	if "sha256:"+hexSum != a.ModuleDigest {
		return "", fmt.Errorf("oci: module of %s: sha256 %s, its manifest says %s; the stored copy is kept", a.Manifest, hexSum, a.ModuleDigest)
	}
	path := s.ModulePath(hexSum)
	if err := atomicfile.Write(path, a.Module, 0o644); err != nil {
		return "", fmt.Errorf("oci: store: %w", err)
	}
	for _, sig := range []struct {
		suffix string
		b      []byte
	}{{trust.MinisigSuffix, a.Signatures.Minisig}, {trust.BundleSuffix, a.Signatures.Bundle}} {
		if sig.b == nil {
			if err := os.Remove(path + sig.suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("oci: store: %w", err)
			}
			continue
		}
		if err := atomicfile.Write(path+sig.suffix, sig.b, 0o644); err != nil {
			return "", fmt.Errorf("oci: store: %w", err)
		}
	}
	rec, _ := json.Marshal(stored{Module: a.ModuleDigest})
	if err := atomicfile.Write(s.manifestPath(a.Manifest), rec, 0o644); err != nil {
		return "", fmt.Errorf("oci: store: %w", err)
	}
	return path, nil
}

// Lookup returns the module kept for a manifest digest: its path and
// sha256 hex. ok is false when the store does not have it (or no longer
// has its module).
func (s *Store) Lookup(manifest string) (path, moduleHex string, ok bool) {
	b, err := os.ReadFile(s.manifestPath(manifest))
	if err != nil {
		return "", "", false
	}
	var rec stored
	if json.Unmarshal(b, &rec) != nil {
		return "", "", false
	}
	moduleHex, found := strings.CutPrefix(rec.Module, "sha256:")
	if !found || !isHex64(moduleHex) {
		return "", "", false
	}
	path = s.ModulePath(moduleHex)
	if _, err := os.Stat(path); err != nil {
		return "", "", false
	}
	return path, moduleHex, true
}

func (s *Store) manifestPath(manifest string) string {
	return filepath.Join(s.dir, "manifests", strings.TrimPrefix(manifest, "sha256:")+".json")
}

func (s *Store) tagPath(ref Reference) string {
	return filepath.Join(s.dir, "tags", filepath.FromSlash(safePath(ref.Registry)), filepath.FromSlash(safePath(ref.Repository)), safePath(ref.Tag))
}

// safePath keeps a registry, repository or tag from leaving its place in
// the store (they are already restricted to [a-z0-9._:/-] by reference
// parsing; ".." and ":" are mapped out).
func safePath(s string) string {
	return strings.NewReplacer("..", "_", ":", "_").Replace(s)
}

// RecordTag records the manifest digest a tag was resolved to.
func (s *Store) RecordTag(ref Reference, manifest string) error {
	if err := atomicfile.Write(s.tagPath(ref), []byte(manifest+"\n"), 0o644); err != nil {
		return fmt.Errorf("oci: store: %w", err)
	}
	return nil
}

// Tag returns the manifest digest recorded for ref's tag, "" when none.
func (s *Store) Tag(ref Reference) string {
	b, err := os.ReadFile(s.tagPath(ref))
	if err != nil {
		return ""
	}
	d := strings.TrimSpace(string(b))
	if h, ok := strings.CutPrefix(d, "sha256:"); !ok || !isHex64(h) {
		return ""
	}
	return d
}

func isHex64(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}
