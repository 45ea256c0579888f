package corral

import (
	"encoding/json"
	"fmt"

	"github.com/corral-mcp/corral/abi"
)

// hostABI is the raw host interface of abi.ImportModule, one method per
// host function except set_result. Functions that produce output return the
// number of bytes pending, fetched with take, or a negative errno. Under
// GOOS=wasip1 it is the real host (host_wasip1.go); elsewhere a FakeHost.
type hostABI interface {
	take(dst []byte) int32
	log(level int32, msg []byte) int32
	notify(kind int32, payload []byte) int32
	progress(progress, total float64, msg []byte) int32
	kvGet(key []byte) int32
	kvSet(key, val []byte) int32
	kvDelete(key []byte) int32
	fileRead(path []byte) int32
	fileStat(path []byte) int32
	fileList(path []byte) int32
	fileRoots() int32
	httpFetch(req []byte) int32
	configGet(key []byte) int32
}

// output fetches the n pending bytes of host function fn, or turns a
// negative n into an error.
func output(fn string, n int32) ([]byte, error) {
	if n < 0 {
		return nil, errnoError(fn, n)
	}
	buf := make([]byte, n)
	if n == 0 {
		return buf, nil
	}
	got := host.take(buf)
	if got < 0 {
		return nil, errnoError(fn, got)
	}
	if int(got) < len(buf) {
		buf = buf[:got]
	}
	return buf, nil
}

// status turns the result of a host function without output into an error.
func status(fn string, r int32) error {
	if r < 0 {
		return errnoError(fn, r)
	}
	return nil
}

// Log writes msg to the operator's log at level (abi.LogDebug, LogInfo,
// LogWarn or LogError). It needs the log capability. During a call it also
// reaches the client whose request is served, as notifications/message,
// when that request asked for log messages at that level (ABI 1.1).
func Log(level int32, msg string) error {
	return status(abi.FuncLog, host.log(level, []byte(msg)))
}

// Logf formats and logs a message; see Log.
func Logf(level int32, format string, args ...any) error {
	return Log(level, fmt.Sprintf(format, args...))
}

// NotifyResourceUpdated tells subscribed clients that the resource at uri
// changed. It needs the notify capability.
func NotifyResourceUpdated(uri string) error {
	return status(abi.FuncNotify, host.notify(abi.NotifyResourceUpdated, []byte(uri)))
}

// NotifyResourcesListChanged tells clients that the plugin's resource list
// changed. It needs the notify capability.
func NotifyResourcesListChanged() error {
	return status(abi.FuncNotify, host.notify(abi.NotifyResourcesListChanged, nil))
}

// NotifyPromptsListChanged tells clients that the prompt list changed. It
// needs the notify capability.
func NotifyPromptsListChanged() error {
	return status(abi.FuncNotify, host.notify(abi.NotifyPromptsListChanged, nil))
}

// NotifyToolsListChanged tells clients that the tool list changed. It needs
// the notify capability.
func NotifyToolsListChanged() error {
	return status(abi.FuncNotify, host.notify(abi.NotifyToolsListChanged, nil))
}

// KVStore is the plugin's private key-value store (the kv capability).
type KVStore struct{}

// KV is the plugin's key-value store.
var KV KVStore

// Get returns the value of key; a missing key is an error wrapping
// ErrNotFound.
func (KVStore) Get(key string) ([]byte, error) {
	return output(abi.FuncKVGet, host.kvGet([]byte(key)))
}

// Set stores val under key; over the quota it fails with ErrQuota.
func (KVStore) Set(key string, val []byte) error {
	return status(abi.FuncKVSet, host.kvSet([]byte(key), val))
}

// Delete removes key; deleting a missing key is not an error.
func (KVStore) Delete(key string) error {
	return status(abi.FuncKVDelete, host.kvDelete([]byte(key)))
}

// FileSystem reads the files under the roots the operator granted (the
// files capability). Paths are absolute and slash-separated, as in a
// file:// URI; a path outside every root fails with ErrDenied.
type FileSystem struct{}

// Files is the read-only view of the granted roots.
var Files FileSystem

// Read returns the whole content of the file at path.
func (FileSystem) Read(path string) ([]byte, error) {
	return output(abi.FuncFileRead, host.fileRead([]byte(path)))
}

// Stat describes the file or directory at path.
func (FileSystem) Stat(path string) (abi.FileInfo, error) {
	var fi abi.FileInfo
	err := decodeOutput(abi.FuncFileStat, host.fileStat([]byte(path)), &fi)
	return fi, err
}

// List describes the entries of the directory at path.
func (FileSystem) List(path string) ([]abi.FileInfo, error) {
	var list []abi.FileInfo
	err := decodeOutput(abi.FuncFileList, host.fileList([]byte(path)), &list)
	return list, err
}

// Roots returns the granted roots as absolute slash-separated paths.
func (FileSystem) Roots() ([]string, error) {
	var roots []string
	err := decodeOutput(abi.FuncFileRoots, host.fileRoots(), &roots)
	return roots, err
}

func decodeOutput(fn string, n int32, v any) error {
	b, err := output(fn, n)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("corral: %s: %w: %v", fn, ErrBadOutput, err)
	}
	return nil
}

// HTTPClient makes outbound requests to the hosts the operator granted (the
// http capability). Redirects, size caps and address checks are the host's.
type HTTPClient struct{}

// HTTP is the outbound HTTP client.
var HTTP HTTPClient

// Do performs req.
func (HTTPClient) Do(req abi.HTTPRequest) (*abi.HTTPResponse, error) {
	b, err := json.Marshal(&req)
	if err != nil {
		return nil, fmt.Errorf("corral: encode http request: %w", err)
	}
	var resp abi.HTTPResponse
	if err := decodeOutput(abi.FuncHTTP, host.httpFetch(b), &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// Get fetches url with optional request headers.
func (c HTTPClient) Get(url string, headers map[string]string) (*abi.HTTPResponse, error) {
	return c.Do(abi.HTTPRequest{Method: "GET", URL: url, Headers: headers})
}

// Post sends body with the given content type to url.
func (c HTTPClient) Post(url, contentType string, body []byte) (*abi.HTTPResponse, error) {
	return c.Do(abi.HTTPRequest{Method: "POST", URL: url, Headers: map[string]string{"Content-Type": contentType}, Body: body})
}

// ConfigStore reads the values the operator set for the plugin (the config
// capability).
type ConfigStore struct{}

// Config holds the operator's settings for the plugin.
var Config ConfigStore

// Get returns the value of key; an unset key is an error wrapping
// ErrNotFound.
func (ConfigStore) Get(key string) (string, error) {
	b, err := output(abi.FuncConfigGet, host.configGet([]byte(key)))
	return string(b), err
}
