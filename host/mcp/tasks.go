package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/tasks"
)

// TasksExtension is the id of the tasks extension (2026-07-28 only).
const TasksExtension = "io.modelcontextprotocol/tasks"

// errNoTasksCap answers a request that needs the tasks extension from a
// client whose request did not declare it.
var errNoTasksCap = errorWithData(CodeMissingClientCapability, "Missing required client capability", map[string]any{
	"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: struct{}{}}},
})

// declaresTasks reports whether a request's clientCapabilities declare
// the tasks extension.
func declaresTasks(caps json.RawMessage) bool {
	var c struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(caps, &c) != nil {
		return false
	}
	_, ok := c.Extensions[TasksExtension]
	return ok
}

// taskCall decides how a modern tools/call of a task-supporting tool runs:
// handled is false when it runs as usual.
func (s *Server) taskCall(set *catalog.Set, r catalog.Request, m *Message, args json.RawMessage) (msg []byte, handled bool, err *Error) {
	if s.opts.Tasks == nil || r.Input == nil {
		return nil, false, nil
	}
	tt, visible := set.ToolTask(r.Principal, m.p.Name)
	if !visible || tt.Support == "" {
		return nil, false, nil
	}
	if !declaresTasks(r.Input.Capabilities) {
		if tt.Support == abi.TaskRequired {
			return nil, true, errNoTasksCap
		}
		return nil, false, nil
	}
	if tt.InputFirst && r.Input.Responses == nil {
		return nil, false, nil // gather input first, as a plain call
	}
	first := *r.Input // an input-first retry's answers go to the first run
	caps, name, plugin := r.Input.Capabilities, m.p.Name, tt.Plugin
	// A tool's own task deadline replaces the plugin's call deadline for
	// each run of the guest; the operator's tasks.deadline bounds it.
	limit := min(tt.Deadline, s.opts.Tasks.Deadline())
	work := func(ctx context.Context, in *tasks.Resume, status func(string)) tasks.Outcome {
		cr := catalog.Request{Principal: r.Principal, Input: &catalog.Input{Capabilities: caps},
			Sink: taskSink(status), TaskDeadline: limit}
		if in == nil {
			cr.Input.Responses, cr.Input.State = first.Responses, first.State
		} else {
			cr.Input.Responses, _ = json.Marshal(in.Responses)
			cr.Input.State = in.State
		}
		cur := s.current()
		if cur == nil {
			return failure(&Error{Code: CodeInternalError, Message: "No plugins are loaded."})
		}
		raw, cerr := cur.CallTool(ctx, cr, name, args)
		var ir *catalog.InputRequiredError
		switch {
		case errors.As(cerr, &ir):
			var o struct {
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
				RequestState  *string                    `json:"requestState"`
			}
			if json.Unmarshal(ir.Result, &o) != nil || len(o.InputRequests) == 0 {
				return failure(&Error{Code: CodeInternalError, Message: "Internal error."})
			}
			return tasks.Outcome{Requests: o.InputRequests, State: o.RequestState}
		case limit > 0 && timedOut(cerr) && ctx.Err() == nil:
			s.log.Warn("mcp: task run past its deadline", "tool", name, "plugin", plugin, "err", cerr)
			return failure(errorWithData(CodeInternalError, "The tool call did not finish within its task deadline of "+limit.String()+".",
				map[string]string{"plugin": plugin}))
		case cerr != nil:
			return failure(s.mapError(cerr, m, eraModern))
		}
		return tasks.Outcome{Result: raw}
	}
	t, serr := s.opts.Tasks.Start(r.Principal.ID, plugin, work)
	if serr != nil {
		var le *tasks.LimitError
		if errors.As(serr, &le) {
			return nil, true, errorWithData(CodeRateLimited, "Too many unfinished tasks.", map[string]any{"scope": le.Scope, "max": le.Max})
		}
		s.log.Error("mcp: task not created", "tool", name, "err", serr)
		return nil, true, &Error{Code: CodeInternalError, Message: "Internal error."}
	}
	return s.result(m.ID, eraModern, 256, func(b []byte) []byte {
		b = append(b, `{"resultType":"task"`...)
		b = s.appendTask(b, t)
		return s.closeResult(b, eraModern, false, 0, false)
	}), true, nil
}

// timedOut reports whether err is a provider's call that ran past its
// deadline.
func timedOut(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// taskSink turns a task's progress into its statusMessage. A task has no
// request stream for log messages: they are dropped.
type taskSink func(message string)

// Progress implements catalog.Sink: the guest's message, or the numbers
// when it gave none.
func (f taskSink) Progress(progress, total float64, message string) bool {
	if message == "" {
		message = strconv.FormatFloat(progress, 'f', -1, 64)
		if total > 0 {
			message += " of " + strconv.FormatFloat(total, 'f', -1, 64)
		}
	}
	f(message)
	return true
}

// Log implements catalog.Sink.
func (taskSink) Log(_, _, _ string) bool { return false }

func failure(e *Error) tasks.Outcome {
	b, _ := json.Marshal(struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data})
	return tasks.Outcome{Error: b}
}

// appendTask appends the members of Task after an opening member.
func (s *Server) appendTask(b []byte, t *tasks.Task) []byte {
	b = append(b, `,"taskId":`...)
	b = appendString(b, t.ID)
	b = append(b, `,"status":`...)
	b = appendString(b, string(t.Status))
	if t.Message != "" {
		b = append(b, `,"statusMessage":`...)
		b = appendString(b, t.Message)
	}
	b = append(b, `,"createdAt":`...)
	b = appendString(b, t.Created.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"lastUpdatedAt":`...)
	b = appendString(b, t.Updated.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"ttlMs":`...)
	b = strconv.AppendInt(b, s.opts.Tasks.TTL().Milliseconds(), 10)
	b = append(b, `,"pollIntervalMs":`...)
	return strconv.AppendInt(b, max(s.opts.Tasks.PollInterval().Milliseconds(), 1), 10)
}

// taskMethod serves tasks/get, tasks/update and tasks/cancel.
func (s *Server) taskMethod(ctx context.Context, req Request, m *Message) ([]byte, *Error) {
	if m.pErr != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: " + paramsProblem(m.pErr) + "."}
	}
	if !declaresTasks(m.p.Meta.ClientCapabilities) {
		return nil, errNoTasksCap
	}
	if m.p.TaskID == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: taskId is required."}
	}
	owner := req.Principal.ID
	if owner == "" {
		owner = catalog.Anonymous().ID
	}
	mgr := s.opts.Tasks
	var err error
	switch m.Method {
	case "tasks/get":
		var t *tasks.Task
		if t, err = mgr.Get(ctx, owner, m.p.TaskID); err == nil {
			return s.result(m.ID, eraModern, 256+len(t.Result)+len(t.Error), func(b []byte) []byte {
				b = openModern(b)
				b = s.appendTask(b, t)
				switch t.Status {
				case tasks.Completed:
					b = append(b, `,"result":`...)
					b = append(b, bytes.TrimSpace(t.Result)...)
				case tasks.Failed:
					b = append(b, `,"error":`...)
					b = append(b, t.Error...)
				case tasks.InputRequired:
					reqs, _ := json.Marshal(t.Pending)
					b = append(b, `,"inputRequests":`...)
					b = append(b, reqs...)
				}
				return s.closeResult(b, eraModern, false, 0, false)
			}), nil
		}
	case "tasks/update":
		var responses map[string]json.RawMessage
		if len(m.p.InputResponses) == 0 || json.Unmarshal(m.p.InputResponses, &responses) != nil || responses == nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid params: inputResponses must be an object."}
		}
		err = mgr.Update(ctx, owner, m.p.TaskID, responses)
	default: // tasks/cancel
		err = mgr.Cancel(ctx, owner, m.p.TaskID)
	}
	if errors.Is(err, tasks.ErrNotFound) {
		return nil, errorWithData(CodeInvalidParams, "Task not found.", map[string]string{"taskId": m.p.TaskID})
	}
	if err != nil {
		s.log.Error("mcp: task request failed", "method", m.Method, "err", err)
		return nil, &Error{Code: CodeInternalError, Message: "Internal error."}
	}
	return s.result(m.ID, eraModern, 64, func(b []byte) []byte {
		return s.closeResult(openModern(b), eraModern, false, 0, false)
	}), nil
}

// withoutExecution drops execution (taskSupport) from the tools of a
// 2025-11-25 list: those sessions get no tasks, so no tool may look like
// one that needs them. Items without it are returned as they are.
func withoutExecution(items []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	for i, it := range items {
		if !bytes.Contains(it, []byte(`"execution"`)) {
			continue
		}
		var tool map[string]json.RawMessage
		if json.Unmarshal(it, &tool) != nil {
			continue
		}
		if _, ok := tool["execution"]; !ok {
			continue
		}
		delete(tool, "execution")
		b, err := json.Marshal(tool)
		if err != nil {
			continue
		}
		if out == nil {
			out = slices.Clone(items)
		}
		out[i] = b
	}
	if out == nil {
		return items
	}
	return out
}
