package auth

import (
	"testing"

	"github.com/corral-mcp/corral/abi"
)

func TestOperatorsHas(t *testing.T) {
	ops := Operators{Principals: []string{"ops"}, Groups: []string{"sre"}}
	for _, tt := range []struct {
		p    abi.Principal
		want bool
	}{
		{abi.Principal{ID: "ops"}, true},
		{abi.Principal{ID: "carol", Groups: []string{"dev", "sre"}}, true},
		{abi.Principal{ID: "bob", Groups: []string{"dev"}}, false},
		{abi.Principal{ID: "Ops"}, false},
		{abi.Principal{ID: "", Groups: []string{"sre"}}, false},
	} {
		if got := ops.Has(tt.p); got != tt.want {
			t.Errorf("Has(%+v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if (Operators{}).Has(abi.Principal{ID: "anonymous"}) {
		t.Error("the empty role has a member")
	}
}
