// Package auth turns credentials into principals and decides what each
// principal may see.
//
// An [Authenticator] checks the Authorization: Bearer header of HTTP and
// WebSocket requests against static tokens (kept only as SHA-256 hashes and
// compared in constant time) and JWTs (HS256 with a shared secret, RS256 or
// ES256 against a JWKS file, with issuer, audience and expiry checks). A
// request without valid credentials gets 401 with a WWW-Authenticate header
// pointing at the OAuth 2.0 Protected Resource Metadata document (RFC 9728)
// that [Authenticator.MetadataHandler] serves. Tokens are never logged and
// never leave this package: the rest of the host, and every plugin, sees an
// [abi.Principal] only.
//
// A [Policy] maps principals and groups to the plugins, schemes, resources,
// templates, prompts and tools they may see; it implements catalog.Policy,
// so the catalog filters lists, hides what a principal may not see exactly
// like something missing, and marks per-principal answers private.
//
// A [Limiter] rate-limits a principal's completion requests.
package auth
