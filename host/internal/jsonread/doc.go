// Package jsonread is corral's one reader of JSON from untrusted bytes:
// the JSON-RPC messages clients send and everything plugins return.
//
// It reads a value in one pass, checking syntax and UTF-8 as it goes, and
// it is strict where encoding/json is lenient at a trust boundary:
//
//   - in an object the host reads (one whose member names it knows), a
//     repeated member name is refused, and so is a name that matches a
//     known one only by case (Unicode simple folding, as encoding/json
//     matches names); other unknown names are ignored, since MCP and the
//     plugin ABI let newer peers add members;
//   - a string must be valid UTF-8 (encoding/json would replace bad bytes
//     with U+FFFD, and another reader might not);
//   - only whitespace may follow the value.
//
// Opaque values the host only passes on (tool arguments below their top
// level, structuredContent, _meta values, capabilities) are checked for
// well-formedness alone (Decoder.Skip): the host does not interpret them,
// so there is no second reading of them in corral to disagree with, and
// refusing repeated names inside them would cost a set of names per
// object on the hot path.
//
// Everything else follows encoding/json's rules (null leaves a value as
// it is, a nesting limit of 10,000, what a number may look like), so on
// valid UTF-8 without repeated or case-folded member names the reader
// decodes exactly what encoding/json does (FuzzUnmarshal holds the two
// side by side).
//
// Decoder is the low-level reader for the hot paths (host/mcp's request
// decoding, host/catalog's plugin output, host/plugin's manifests, which a
// start of many plugins reads by the thousand). Unmarshal serves the cold
// ones (error and input_required objects, http_fetch requests): it
// walks the value with the member names of the Go type's json tags, then
// lets encoding/json fill the value, which on input the walk accepted
// means exactly what the walk checked.
package jsonread
