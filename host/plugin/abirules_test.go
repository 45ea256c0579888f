package plugin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/corral-mcp/corral/abi"
)

// TestZeroLengthAnyPointer: ABI.md §5, a length of 0 is valid whatever the
// pointer. zerolen.wasm hands log, notify and take length 0 with a pointer
// far outside memory; with the grants each answers its ordinary result,
// without them log and notify are denied, and nothing traps.
func TestZeroLengthAnyPointer(t *testing.T) {
	tests := []struct {
		name   string
		grants Grants
		want   string
	}{
		{"granted", Grants{Log: true, Notify: true}, "[0,0,-2]"},
		{"not granted", Grants{}, "[-1,-1,-2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, RuntimeConfig{})
			p := e.load(t, "zerolen", Config{PoolSize: 1, Grants: tt.grants})
			out, err := invoke(p, context.Background(), abi.OpReadResource, []byte(`{}`))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if string(out) != tt.want {
				t.Errorf("log, notify, take = %s, want %s", out, tt.want)
			}
		})
	}
}

// TestSetResultOutsideCall: ABI.md §8, set_result traps outside
// corral_call. bufresult.wasm calls it from corral_buffer (asked for when
// the request is over 1 KiB) and returns OK from corral_call without
// calling it: the call traps instead of answering what corral_buffer set.
func TestSetResultOutsideCall(t *testing.T) {
	e := newEnv(t, RuntimeConfig{})
	p := e.load(t, "bufresult", Config{PoolSize: 1})
	req := []byte(`{"pad":"` + strings.Repeat("x", 2000) + `"}`)
	out, err := invoke(p, context.Background(), abi.OpReadResource, req)
	var pe *Error
	if !errors.As(err, &pe) || pe.Class != ClassTrap {
		t.Fatalf("call = %q, %v; want a trap", out, err)
	}
	if !strings.Contains(err.Error(), "outside "+abi.ExportCall) {
		t.Errorf("error %q does not say set_result was called outside %s", err, abi.ExportCall)
	}
}
