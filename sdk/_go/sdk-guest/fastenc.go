package corral

import (
	"strconv"

	"github.com/corral-mcp/corral/abi"
)

// completeResult assembles a completion response by hand, like
// readResult: encoding/json's reflection walks many functions per value,
// and a Go guest pays for every function entry and loop iteration when the
// host enforces call deadlines, so a 100-value answer is far cheaper this
// way. The output is the JSON encoding of abi.CompleteResult.
func (e *encoder) completeResult(c *abi.Completion) []byte {
	b := append(e.raw[:0], `{"completion":{"values":[`...)
	for i, v := range c.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v)
	}
	b = append(b, ']')
	if c.Total != nil {
		b = append(b, `,"total":`...)
		b = strconv.AppendInt(b, int64(*c.Total), 10)
	}
	if c.HasMore {
		b = append(b, `,"hasMore":true`...)
	}
	b = append(b, "}}"...)
	e.raw = b
	return b
}

// promptResult assembles a prompt response around its raw messages, as
// readResult does for contents: encoding/json would re-scan every message
// to compact it, and the host validates each message it receives anyway.
func (e *encoder) promptResult(res *abi.GetPromptResult) []byte {
	b := append(e.raw[:0], '{')
	if res.Description != "" {
		b = append(b, `"description":`...)
		b = appendString(b, res.Description)
		b = append(b, ',')
	}
	b = append(b, `"messages":[`...)
	for i, m := range res.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	b = append(b, "]}"...)
	e.raw = b
	return b
}
