// Package cluster holds what lets several corral replicas serve as one
// behind a load balancer, on NATS (github.com/nats-io/nats.go; JetStream
// for stored state; docs/cluster.md):
//
//   - [Conn], a replica's one connection, made in the background and made
//     again after every outage: NATS being down degrades a replica (what
//     cannot work meanwhile fails fast and is counted, and [Conn.Status]
//     says so for the operator status and metrics), never stops it;
//   - [Bus], the event bus beneath host/notify's Hub, on core NATS
//     pub/sub: the plugins' notify calls reach the other replicas;
//   - [Conn.OpenStore], the plugins' kv stores on JetStream KV, a bucket
//     per plugin whose quota the server enforces across replicas;
//   - [SessionStore], the 2025-11-25 session records and quotas
//     (host/session's Store) in a JetStream KV bucket, so that any replica
//     serves any request of a session and a DELETE revokes it everywhere;
//   - [Answers], which carries a client's answer to a server-to-client
//     request of the input bridge to the replica waiting for it, over NATS
//     request/reply on a subject per replica;
//   - [TaskStore], host/tasks' Store and Remote: task records in a
//     JetStream KV bucket (large results in the Object Store), a lease per
//     process running tasks, and cancels and answers carried to it over
//     request/reply.
//
// Without cluster configuration none of it runs: corral is one process
// with its local kv stores and its in-memory session store.
package cluster
