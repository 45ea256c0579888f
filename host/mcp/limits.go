package mcp

// CodeRateLimited is corral's JSON-RPC error code for a request refused by
// a per-client limit: the completion rate of a principal, or (on HTTP,
// before the body is read) a client's bound on requests in progress. It
// lies outside the range JSON-RPC and MCP reserve; on HTTP the response
// status is 429.
const CodeRateLimited = -31429

var errRateLimited = &Error{Code: CodeRateLimited, Message: "Too many requests: completion rate limit exceeded; retry later."}
