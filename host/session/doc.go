// Package session keeps the 2025-11-25 Streamable HTTP sessions of corral
// so that any replica sharing the key ring can serve any request of one.
//
// A session is split in two. What initialize fixes for the life of the
// session (its id, the protocol version, whom it belongs to) travels in
// the Mcp-Session-Id itself, a [Token] sealed under the ring's
// [keys.Session] key: any replica holding the ring opens it without asking
// anyone, and a client can neither read nor alter it. What changes later
// (the log level, the subscribed resources, whether the client said
// initialized) and what is too large or too private for a header (the
// client's capabilities, whom the session quota counts it against) is a
// [Record] in a [Store]: [Memory] for one process, the default, and a
// shared store (host/cluster's, on JetStream KV) for replicas. Deleting a
// record revokes the session everywhere: every request reads its record,
// and a token whose record is gone is a session that does not exist.
//
// The store also holds the session quotas (http.maxSessions,
// http.maxSessionsPerClient): [Store.Create] admits a session or ends the
// client's least recently used one to make room.
package session
