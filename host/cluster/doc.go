// Package cluster holds what lets several corral replicas serve as one
// behind a load balancer, on NATS (github.com/nats-io/nats.go; JetStream
// for stored state). This file's package comment covers the parts present:
//
//   - [SessionStore], the 2025-11-25 session records and quotas
//     (host/session's Store) in a JetStream KV bucket, so that any replica
//     serves any request of a session and a DELETE revokes it everywhere;
//   - [Answers], which carries a client's answer to a server-to-client
//     request of the input bridge to the replica waiting for it, over NATS
//     request/reply on a subject per replica.
//
// Without cluster configuration none of it runs: corral is one process
// with its in-memory session store.
package cluster
