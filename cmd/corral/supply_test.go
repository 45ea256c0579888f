package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/trust"
)

// testKey is the repository's public test key (testdata/keys).
var (
	testKey    = filepath.Join(repoRoot, "testdata", "keys", "corral-test.key")
	testPubKey = filepath.Join(repoRoot, "testdata", "keys", "corral-test.pub")
)

// testPub returns the RW... line of the test key.
func testPub(t *testing.T) string {
	t.Helper()
	pub, err := publicKey(testPubKey)
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

// TestSignVerifyCheck: a publisher signs, an operator verifies and checks
// under a policy; an unsigned or altered file is refused with its reason.
func TestSignVerifyCheck(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "wat", "good.wasm"))
	if err != nil {
		t.Skipf("testdata/wat/good.wasm: %v", err)
	}
	t.Setenv("CORRAL_PLUGINS_CACHE_DIR", t.TempDir())
	dir := t.TempDir()
	file := filepath.Join(dir, "good.wasm")
	os.WriteFile(file, good, 0o644)
	cfg := filepath.Join(dir, "corral.yaml")
	os.WriteFile(cfg, []byte("plugins:\n  trust:\n    minisign: ["+testPub(t)+"]\n"), 0o644)

	// Unsigned: refused before compiling.
	code, _, errs := runCLI(t, "", "plugin", "check", "--config", cfg, file)
	if code != exitFail || !strings.Contains(errs, "refused: refused by plugins.trust") || !strings.Contains(errs, "unsigned") {
		t.Errorf("check unsigned: exit %d\n%s", code, errs)
	}
	if code, _, errs = runCLI(t, "", "plugin", "verify", "--config", cfg, file); code != exitFail || !strings.Contains(errs, "unsigned") {
		t.Errorf("verify unsigned: exit %d\n%s", code, errs)
	}

	code, out, errs := runCLI(t, "", "plugin", "sign", "--key", testKey, file)
	if code != exitOK || !strings.Contains(out, "signed with minisign key 9D538C6A1AACAEE3") {
		t.Fatalf("sign: exit %d\n%s\n%s", code, out, errs)
	}
	if _, err := os.Stat(file + trust.MinisigSuffix); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--config", cfg}, {"--key", testPubKey}, {"--key", testPub(t)}} {
		code, out, errs = runCLI(t, "", append(append([]string{"plugin", "verify"}, args...), file)...)
		if code != exitOK || !strings.Contains(out, "ok: signed by minisign:"+testPub(t)) {
			t.Errorf("verify %v: exit %d\n%s\n%s", args, code, out, errs)
		}
	}
	code, out, errs = runCLI(t, "", "plugin", "check", "--config", cfg, file)
	if code != exitOK || !strings.Contains(out, "signed by minisign:"+testPub(t)) {
		t.Errorf("check signed: exit %d\n%s\n%s", code, out, errs)
	}

	// Other bytes under the same signature.
	os.WriteFile(file, append(good, 0, 0), 0o644)
	code, _, errs = runCLI(t, "", "plugin", "verify", "--config", cfg, file)
	if code != exitFail || !strings.Contains(errs, "does not match the file's bytes") {
		t.Errorf("verify altered: exit %d\n%s", code, errs)
	}
	// A key the policy does not name.
	other := filepath.Join(dir, "other.yaml")
	os.WriteFile(other, []byte("plugins:\n  trust:\n    minisign: [RWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3]\n"), 0o644)
	os.WriteFile(file, good, 0o644)
	code, _, errs = runCLI(t, "", "plugin", "check", "--config", other, file)
	if code != exitFail || !strings.Contains(errs, "which the trust policy does not trust") {
		t.Errorf("check untrusted: exit %d\n%s", code, errs)
	}
	// Failures of the commands themselves.
	if code, _, errs = runCLI(t, "", "plugin", "sign", file); code != exitUsage {
		t.Errorf("sign without --key: exit %d\n%s", code, errs)
	}
	if code, _, errs = runCLI(t, "", "plugin", "verify", file); code != exitFail || !strings.Contains(errs, "no trust policy applies") {
		t.Errorf("verify without a policy: exit %d\n%s", code, errs)
	}
}
