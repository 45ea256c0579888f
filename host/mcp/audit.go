package mcp

import (
	"time"

	"github.com/corral-mcp/corral/host/audit"
	"github.com/corral-mcp/corral/host/catalog"
)

// audited hands Options.Audit the record of one request served: who, which
// method and target, the plugin that owns the target, how it ended and how
// long it took. Only names go in: never arguments, content or tokens.
func (s *Server) audited(req Request, m *Message, err *Error, cancelled bool, took time.Duration) {
	p := req.Principal
	if p.ID == "" {
		p = catalog.Anonymous()
	}
	rec := audit.Record{Time: time.Now().UTC(), Principal: p.ID, Method: m.Method, Outcome: audit.OutcomeOK,
		DurationMS: float64(took.Microseconds()) / 1000}
	kind, target := auditTarget(m)
	visible := true
	if target != "" {
		rec.Target = target
		if set := s.current(); set != nil {
			var owned bool
			rec.Plugin, visible, owned = set.Route(p, kind, target)
			visible = visible || !owned
		}
	}
	switch {
	case cancelled:
		rec.Outcome = audit.OutcomeCancelled
	case err != nil && !visible:
		rec.Outcome, rec.Code = audit.OutcomeDenied, err.Code
	case err != nil:
		rec.Outcome, rec.Code = audit.OutcomeError, err.Code
	}
	s.opts.Audit(rec)
}

// auditTarget is what a request names: a URI, a prompt or a tool.
func auditTarget(m *Message) (kind, target string) {
	if m.pErr != nil {
		return "", ""
	}
	switch m.Method {
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return catalog.TargetURI, m.p.URI
	case "prompts/get":
		return catalog.TargetPrompt, m.p.Name
	case "tools/call":
		return catalog.TargetTool, m.p.Name
	case "completion/complete":
		if r := m.p.Ref; r != nil {
			if r.Type == "ref/prompt" {
				return catalog.TargetPrompt, r.Name
			}
			return catalog.TargetURI, r.URI
		}
	}
	return "", ""
}
