package jsonread

import (
	"errors"
	"testing"
)

func TestCheckUnique(t *testing.T) {
	tests := []struct {
		in       string
		repeated string // the name refused; "" accepted, "!" malformed
	}{
		{`{"a":1,"A":2,"b":{"a":1}}`, ""},
		{`[{"k":1},{"k":2}]`, ""},
		{`"x"`, ""},
		{`{"a":1,"a":2}`, "a"},
		{`{"a":1,"\u0061":2}`, "a"},
		{`{"x":{"y":[{"k":1,"k":2}]}}`, "k"},
		{`[1,{"k":1,"k":2}]`, "k"},
		{`{"a":1} {}`, "!"},
		{"\"\xff\"", "!"},
		{`{"a":`, "!"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			err := CheckUnique([]byte(tt.in))
			var me *MemberError
			var se *SyntaxError
			switch {
			case tt.repeated == "" && err != nil:
				t.Errorf("CheckUnique = %v, want nil", err)
			case tt.repeated == "!" && !errors.As(err, &se):
				t.Errorf("CheckUnique = %v, want a SyntaxError", err)
			case tt.repeated != "" && tt.repeated != "!" && (!errors.As(err, &me) || me.Name != tt.repeated):
				t.Errorf("CheckUnique = %v, want %q repeated", err, tt.repeated)
			}
		})
	}
}
