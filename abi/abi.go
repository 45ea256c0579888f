// Package abi is the contract between the corral host and its WebAssembly
// guests: the import module name, the export and host-function names, the
// operation codes, status and errno values, capability names and the JSON
// payload of every operation.
//
// It uses the standard library only and holds no mutable state, so the host
// (host/plugin) and the Go guest SDK (sdk-guest) can both depend on it.
// ABI.md beside this file specifies the same contract language-neutrally.
package abi

import "fmt"

// Version of the ABI. The major version is part of ImportModule and of the
// ExportMarker name; a guest built for another major does not link. Minor
// versions only add host functions, operations or optional fields.
const (
	Major = 1
	Minor = 4
)

// ImportModule is the module name under which the host provides its
// functions to the guest.
const ImportModule = "corral_v1"

// Names of the functions and memory a guest exports.
const (
	// ExportMarker is a function () -> i32 returning the guest's ABI minor
	// version. Its presence declares ABI major 1.
	ExportMarker = "corral_abi_v1"
	// ExportBuffer is a function (size i32) -> i32 returning the address of
	// a guest-owned buffer of at least size bytes, or 0 if it cannot.
	ExportBuffer = "corral_buffer"
	// ExportCall is a function (op i32, len i32) -> i32. It handles the
	// request held in the first len bytes of the last buffer returned by
	// ExportBuffer and returns a Status. Before returning it passes its
	// response to the host through FuncSetResult.
	ExportCall = "corral_call"
	// ExportInitialize is the reactor start function. It is optional; when
	// present the host calls it once per instance before anything else.
	ExportInitialize = "_initialize"
	// ExportMemory is the guest's linear memory.
	ExportMemory = "memory"
)

// Names of the host functions in ImportModule.
const (
	// FuncSetResult (ptr, len i32) hands the response of the current call
	// to the host, which copies it at once.
	FuncSetResult = "set_result"
	// FuncTake (ptr, len i32) -> i32 copies the pending output of the last
	// host function that produced one into guest memory.
	FuncTake = "take"
	// FuncLog (level, ptr, len i32) -> i32 writes a log line.
	FuncLog = "log"
	// FuncNotify (kind, ptr, len i32) -> i32 queues a notification.
	FuncNotify = "notify"
	// FuncProgress (progress f64, total f64, mptr, mlen i32) -> i32 reports
	// the progress of the current call to the client that made the request,
	// when it asked for progress (ABI 1.1). total is 0 when unknown; the
	// message may be empty. It needs no capability.
	FuncProgress = "progress"
	// FuncKVGet (kptr, klen i32) -> i32 reads a value; output pending.
	FuncKVGet = "kv_get"
	// FuncKVSet (kptr, klen, vptr, vlen i32) -> i32 stores a value.
	FuncKVSet = "kv_set"
	// FuncKVDelete (kptr, klen i32) -> i32 deletes a value.
	FuncKVDelete = "kv_delete"
	// FuncFileRead (pptr, plen i32) -> i32 reads a whole file; output pending.
	FuncFileRead = "file_read"
	// FuncFileStat (pptr, plen i32) -> i32 describes a file as FileInfo JSON;
	// output pending.
	FuncFileStat = "file_stat"
	// FuncFileList (pptr, plen i32) -> i32 lists a directory as a JSON array
	// of FileInfo; output pending.
	FuncFileList = "file_list"
	// FuncFileRoots () -> i32 returns the granted roots as a JSON array of
	// absolute slash-separated paths; output pending.
	FuncFileRoots = "file_roots"
	// FuncHTTP (rptr, rlen i32) -> i32 performs an HTTPRequest and returns
	// an HTTPResponse as JSON; output pending.
	FuncHTTP = "http_fetch"
	// FuncConfigGet (kptr, klen i32) -> i32 reads an operator-set value;
	// output pending.
	FuncConfigGet = "config_get"
)

// Capability names a manifest requests and an operator grants.
const (
	CapLog    = "log"
	CapNotify = "notify"
	CapKV     = "kv"
	CapFiles  = "files"
	CapHTTP   = "http"
	CapConfig = "config"
)

// Capabilities lists every capability name, in a stable order.
var Capabilities = [...]string{CapLog, CapNotify, CapKV, CapFiles, CapHTTP, CapConfig}

// Op is an operation code passed to ExportCall.
type Op uint32

// Operations. Their request and response payloads are the types of the
// same name in payload.go.
const (
	OpDescribe      Op = 1
	OpListResources Op = 2
	OpReadResource  Op = 3
	OpGetPrompt     Op = 4
	OpCallTool      Op = 5
	OpComplete      Op = 6
)

// String returns the operation's name as used in logs and metrics.
func (o Op) String() string {
	switch o {
	case OpDescribe:
		return "describe"
	case OpListResources:
		return "list_resources"
	case OpReadResource:
		return "read_resource"
	case OpGetPrompt:
		return "get_prompt"
	case OpCallTool:
		return "call_tool"
	case OpComplete:
		return "complete"
	}
	return fmt.Sprintf("op(%d)", uint32(o))
}

// Status is the value ExportCall returns.
type Status int32

// Statuses.
const (
	// StatusOK: the result is the operation's response payload.
	StatusOK Status = 0
	// StatusError: the result is an Error.
	StatusError Status = 1
)

// Errno values returned (as negative i32) by host functions.
const (
	ErrnoDenied      int32 = -1 // capability not granted, or path/host outside the grant
	ErrnoNotFound    int32 = -2 // no such key, file or config value
	ErrnoInvalid     int32 = -3 // malformed argument
	ErrnoQuota       int32 = -4 // kv quota exceeded
	ErrnoTooLarge    int32 = -5 // input or output over a limit
	ErrnoIO          int32 = -6 // I/O or network failure
	ErrnoRateLimited int32 = -7 // too many calls
	ErrnoTimeout     int32 = -8 // the operation took too long
)

// ErrnoString names an errno for error messages.
func ErrnoString(e int32) string {
	switch e {
	case ErrnoDenied:
		return "permission denied"
	case ErrnoNotFound:
		return "not found"
	case ErrnoInvalid:
		return "invalid argument"
	case ErrnoQuota:
		return "quota exceeded"
	case ErrnoTooLarge:
		return "too large"
	case ErrnoIO:
		return "i/o error"
	case ErrnoRateLimited:
		return "rate limited"
	case ErrnoTimeout:
		return "timeout"
	}
	return fmt.Sprintf("errno %d", e)
}

// Log levels for FuncLog.
const (
	LogDebug int32 = 0
	LogInfo  int32 = 1
	LogWarn  int32 = 2
	LogError int32 = 3
)

// Notification kinds for FuncNotify. For NotifyResourceUpdated the payload
// is the resource URI; for the list kinds it is empty.
const (
	NotifyResourceUpdated      int32 = 1
	NotifyResourcesListChanged int32 = 2
	NotifyPromptsListChanged   int32 = 3
	NotifyToolsListChanged     int32 = 4
)
