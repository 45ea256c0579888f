package abi

import "encoding/json"

// Manifest is the response of OpDescribe: who the plugin is, what it claims
// and which capabilities it asks for. MCP metadata uses MCP field names.
type Manifest struct {
	Name        string `json:"name"`    // [a-z0-9][a-z0-9_-]{0,63}
	Version     string `json:"version"` // free form, e.g. "1.2.0"
	ABI         int    `json:"abi"`     // must equal Major
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`

	// Schemes are the URI schemes the plugin owns exclusively; every
	// resource, template and content URI it serves uses one of them.
	Schemes []string `json:"schemes,omitempty"`
	// Resources are static resources the host lists before any the plugin
	// returns from OpListResources.
	Resources []Resource `json:"resources,omitempty"`
	// Templates are RFC 6570 URI templates the plugin serves.
	Templates []Template `json:"templates,omitempty"`
	// Prompts and Tools are served by name.
	Prompts []Prompt `json:"prompts,omitempty"`
	Tools   []Tool   `json:"tools,omitempty"`

	// Capabilities the plugin asks for (Cap* names). Only those the
	// operator also grants are usable.
	Capabilities []string `json:"capabilities,omitempty"`
	// RequiredCapabilities are those of Capabilities the plugin cannot
	// work without (ABI 1.2); the others are optional. The host names
	// every requested capability the operator did not grant at load, and
	// `corral plugin check` fails when a required one is missing. Hosts
	// before 1.2 ignore the field, so a guest lists these in Capabilities
	// too.
	RequiredCapabilities []string `json:"requiredCapabilities,omitempty"`
	// ListsResources says whether OpListResources returns anything beyond
	// Resources; when false the host never calls it.
	ListsResources bool `json:"listsResources,omitempty"`
}

// Resource is an MCP Resource.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
}

// Template is an MCP ResourceTemplate plus the names of the variables the
// plugin can complete.
type Template struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Complete    []string        `json:"complete,omitempty"`
}

// Prompt is an MCP Prompt plus the names of the arguments the plugin can
// complete.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       json.RawMessage  `json:"icons,omitempty"`
	Complete    []string         `json:"complete,omitempty"`
}

// PromptArgument is an MCP PromptArgument.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Tool is an MCP Tool.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	// Execution declares task support (ABI 1.3); nil is "forbidden".
	Execution *ToolExecution `json:"execution,omitempty"`
	// InputFirst (ABI 1.3), for a tool with task support, gathers input
	// before the task: a call without input answers runs as a plain call
	// (it may ask for input), and the retry that carries the answers
	// becomes the task. Clients never see it.
	InputFirst bool `json:"inputFirst,omitempty"`
	// TaskDeadlineMs (ABI 1.4), for a tool with task support, is the
	// deadline in milliseconds of each run of the guest inside a task, in
	// place of the plugin's call deadline (limits.timeout); the host's
	// tasks.deadline bounds it. 0 keeps the call deadline. Clients never
	// see it.
	TaskDeadlineMs int64 `json:"taskDeadlineMs,omitempty"`
}

// ToolExecution is MCP ToolExecution: whether a tool runs as a task
// (io.modelcontextprotocol/tasks) for a client that supports tasks.
type ToolExecution struct {
	// TaskSupport is TaskForbidden (or ""), TaskOptional or TaskRequired.
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Values of ToolExecution.TaskSupport.
const (
	TaskForbidden = "forbidden"
	TaskOptional  = "optional"
	TaskRequired  = "required"
)

// Principal is who a request is served for: an opaque id and groups. Tokens
// and credentials never reach a plugin.
type Principal struct {
	ID     string   `json:"id"`
	Groups []string `json:"groups,omitempty"`
}

// ListResourcesRequest is the payload of OpListResources.
type ListResourcesRequest struct {
	Cursor    string    `json:"cursor,omitempty"` // "" is the first page
	Limit     int       `json:"limit"`            // at most this many resources
	Principal Principal `json:"principal"`
}

// ListResourcesResult is the response of OpListResources.
type ListResourcesResult struct {
	Resources  []json.RawMessage `json:"resources"`            // MCP Resource objects
	NextCursor string            `json:"nextCursor,omitempty"` // "" means the end
}

// ReadResourceRequest is the payload of OpReadResource. When the URI matched
// one of the plugin's templates, Template and Variables say which and how.
type ReadResourceRequest struct {
	URI       string            `json:"uri"`
	Template  string            `json:"template,omitempty"`
	Variables map[string]string `json:"variables,omitempty"`
	Principal Principal         `json:"principal"`
	Input
}

// ReadResourceResult is the response of OpReadResource.
type ReadResourceResult struct {
	Contents []json.RawMessage `json:"contents"` // MCP TextResourceContents or BlobResourceContents
	TTLMs    *int64            `json:"ttlMs,omitempty"`
}

// GetPromptRequest is the payload of OpGetPrompt. Required arguments are
// checked by the host before the plugin is called.
type GetPromptRequest struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Principal Principal         `json:"principal"`
	Input
}

// GetPromptResult is the response of OpGetPrompt.
type GetPromptResult struct {
	Description string            `json:"description,omitempty"`
	Messages    []json.RawMessage `json:"messages"` // MCP PromptMessage objects
}

// CallToolRequest is the payload of OpCallTool.
type CallToolRequest struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Principal Principal       `json:"principal"`
	Input
}

// CallToolResult is the response of OpCallTool: an MCP CallToolResult.
type CallToolResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
}

// CompleteRequest is the payload of OpComplete.
type CompleteRequest struct {
	Ref       CompleteRef       `json:"ref"`
	Argument  CompleteArgument  `json:"argument"`
	Arguments map[string]string `json:"arguments,omitempty"` // context.arguments
	Principal Principal         `json:"principal"`
}

// CompleteRef names what is being completed: a prompt (Type "ref/prompt",
// Name) or a template (Type "ref/resource", URI is the template).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and its partial value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteResult is the response of OpComplete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}

// Completion is an MCP completion: at most 100 values.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// Error codes a guest puts in Error.Code.
const (
	CodeNotFound      = "not_found"      // the resource, prompt or tool does not exist
	CodeInvalidParams = "invalid_params" // the request's arguments are wrong
	CodeInternal      = "internal"       // the plugin failed
	CodeUnavailable   = "unavailable"    // a dependency is down; retry later
)

// Error is the response of any operation that returns StatusError.
type Error struct {
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// FileInfo describes a file for FuncFileStat and FuncFileList. Paths are
// absolute and slash-separated, as in a file:// URI; the host only answers
// for paths inside a granted root.
type FileInfo struct {
	Path    string `json:"path"`
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	Dir     bool   `json:"dir,omitempty"`
	ModTime string `json:"modTime,omitempty"` // RFC 3339
}

// HTTPRequest is the argument of FuncHTTP.
type HTTPRequest struct {
	Method  string            `json:"method"` // GET or POST
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"` // base64 in JSON
}

// HTTPResponse is the output of FuncHTTP.
type HTTPResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"` // base64 in JSON
}
