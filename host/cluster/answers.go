package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/corral-mcp/corral/host/transport"
)

// answerTimeout bounds the forwarding of one answer.
const answerTimeout = 2 * time.Second

// headerSession names the session of a forwarded answer.
const headerSession = "Corral-Session"

// ReplicaTag is the tag of replica (cluster.replica) in the ids of its
// server-to-client requests (mcp.Options.ReplicaTag) and in its answer
// subject: 8 hex digits of its SHA-256, so a client reads nothing of the
// replica's name from an id.
func ReplicaTag(replica string) string {
	sum := sha256.Sum256([]byte(replica))
	return hex.EncodeToString(sum[:4])
}

// Answers carries a client's answer to a server-to-client request (the
// 2025-11-25 input bridge: elicitation/create, sampling/createMessage,
// roots/list) from the replica the balancer sent it to, to the replica
// whose request waits for it: NATS request/reply on the subject
// "<name>.answers.<tag>", which only that replica subscribes to. It
// implements transport.Answers.
type Answers struct {
	nc     *nats.Conn
	prefix string
	tag    string
	sub    *nats.Subscription
}

// NewAnswers returns the Answers of replica in the cluster name, on nc.
// Serve starts taking answers for it.
func NewAnswers(nc *nats.Conn, name, replica string) *Answers {
	if name == "" {
		name = "corral"
	}
	return &Answers{nc: nc, prefix: name + ".answers.", tag: ReplicaTag(replica)}
}

// Tag returns this replica's tag.
func (a *Answers) Tag() string { return a.tag }

// Serve subscribes this replica's subject: each answer forwarded here is
// handed to deliver (transport.HTTPHandler.DeliverAnswer) with its session
// id, and the forwarding replica told whether a bridge took it. The
// subscription survives reconnects; Close ends it.
func (a *Answers) Serve(deliver func(id string, msg []byte) bool) error {
	sub, err := a.nc.Subscribe(a.prefix+a.tag, func(m *nats.Msg) {
		reply := "none"
		if id := m.Header.Get(headerSession); id != "" && deliver(id, m.Data) {
			reply = "ok"
		}
		_ = m.Respond([]byte(reply)) // the forwarder gave up: nothing to do
	})
	if err != nil {
		return fmt.Errorf("cluster: subscribe answers: %w", err)
	}
	a.sub = sub
	return nil
}

// Forward implements transport.Answers.
func (a *Answers) Forward(ctx context.Context, tag, id string, msg []byte) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, answerTimeout)
	defer cancel()
	m := nats.NewMsg(a.prefix + tag)
	m.Header.Set(headerSession, id)
	m.Data = msg
	r, err := a.nc.RequestMsgWithContext(ctx, m)
	if errors.Is(err, nats.ErrNoResponders) {
		return false, nil // no such replica (any more): nobody waits
	}
	if err != nil {
		return false, fmt.Errorf("cluster: forward an answer: %w", err)
	}
	return string(r.Data) == "ok", nil
}

// Close stops taking answers.
func (a *Answers) Close() error {
	if a.sub == nil {
		return nil
	}
	if err := a.sub.Unsubscribe(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("cluster: unsubscribe answers: %w", err)
	}
	return nil
}

var _ transport.Answers = (*Answers)(nil)
