package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/host/keys"
)

// listTools asks for one page of tools/list as alice and returns the
// tools' names, the next cursor and the error, if any, as raw JSON.
func (s *wireServer) listTools(t *testing.T, cursor string) (names []string, next, rpcErr string) {
	t.Helper()
	params := modernMeta
	if cursor != "" {
		params += `,"cursor":"` + cursor + `"`
	}
	a := answerOf(t, s.post(t, "alice", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+params+`}}`, modernHeaders("tools/list", "")))
	var rpc struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.Body), &rpc); err != nil {
		t.Fatalf("tools/list: %v: %s", err, a.Body)
	}
	for _, tool := range rpc.Result.Tools {
		names = append(names, tool.Name)
	}
	return names, rpc.Result.NextCursor, string(rpc.Error)
}

// mintFormat1 signs plain as the previous release's cursor format did:
// base64url(1, plain, HMAC-SHA256 under the secret itself, cut to 16).
func mintFormat1(secret, plain []byte) string {
	body := append([]byte{1}, plain...)
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return base64.RawURLEncoding.EncodeToString(append(body, m.Sum(nil)[:16]...))
}

// TestCursorKeyAliasAndFormat1 runs bin/corral with the deprecated
// catalog.cursorKey (issue 13 item 6):
//   - it is an alias of keys.secret: its cursors are sealed (format 2)
//     under a key derived from the hex-decoded secret, so a server given
//     the same secret as keys.secret pages on with them, and the server
//     logs that the key is deprecated;
//   - a cursor of the previous format (signed, format 1) under the same
//     secret is still accepted and answers what the format 2 one does,
//     and one signed under another secret is refused.
func TestCursorKeyAliasAndFormat1(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	secret := []byte("judge13-test-secret-0123456789abcdef")
	old := startWireEnv(t, []string{"CORRAL_CATALOG_CURSOR_KEY=" + hex.EncodeToString(secret), "CORRAL_CATALOG_PAGE_SIZE=1"}, wireAuth(), "conformance")
	first, cursor, rpcErr := old.listTools(t, "")
	if rpcErr != "" || len(first) != 1 || cursor == "" {
		t.Fatalf("first page: %v, cursor %q, %s", first, cursor, rpcErr)
	}
	if !strings.Contains(old.logs.String(), "catalog.cursorKey is deprecated") {
		t.Error("no deprecation warning for catalog.cursorKey in the log")
	}
	ring, err := keys.New(secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := ring.Open(keys.Cursor, cursor)
	if err != nil {
		t.Fatalf("the cursor is not sealed under the secret catalog.cursorKey names: %v", err)
	}
	second, _, rpcErr := old.listTools(t, cursor)
	if rpcErr != "" || len(second) != 1 {
		t.Fatalf("second page: %v, %s", second, rpcErr)
	}

	v1 := mintFormat1(secret, plain)
	if got, _, rpcErr := old.listTools(t, v1); rpcErr != "" || len(got) != 1 || got[0] != second[0] {
		t.Errorf("a format 1 cursor: %v, %s; want %v", got, rpcErr, second)
	}
	forged := mintFormat1([]byte("another-secret-another-secret-xx"), plain)
	if _, _, rpcErr := old.listTools(t, forged); !strings.Contains(rpcErr, "-32602") {
		t.Errorf("a format 1 cursor under another secret: %q, want -32602", rpcErr)
	}

	renamed := startWireEnv(t, []string{"CORRAL_KEYS_SECRET=" + string(secret), "CORRAL_CATALOG_PAGE_SIZE=1"}, wireAuth(), "conformance")
	if got, _, rpcErr := renamed.listTools(t, cursor); rpcErr != "" || len(got) != 1 || got[0] != second[0] {
		t.Errorf("catalog.cursorKey's cursor on a server with the same keys.secret: %v, %s; want %v", got, rpcErr, second)
	}
	if strings.Contains(old.logs.String()+renamed.logs.String(), string(secret)) {
		t.Error("the secret is in a log")
	}
}
