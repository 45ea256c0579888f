package jsontest

import "testing"

func TestFolded(t *testing.T) {
	for _, tc := range []struct {
		in    string
		known []string
		want  bool
	}{
		{`{"a":1,"b":2}`, nil, false},
		{`{"a":1,"a":2}`, nil, true},
		{`{"a":1,"A":2}`, nil, true},
		{`{"uri":1}`, []string{"uri"}, false},
		{`{"URI":1}`, []string{"uri"}, true},
		{`{"x":{"a":1},"a":2}`, nil, false}, // one name per object
		{`{"x":[{"a":1},{"a":2}]}`, nil, false},
		{`{"x":{"a":1,"A":2}}`, nil, true},
		{`{"x":[1,{"y":2}],"y":3}`, nil, false},
		{`{"x":[1,{"y":2}],"x":3}`, nil, true},
		{`["a","A"]`, nil, false},    // strings in arrays are values
		{`{"a":"A"}`, nil, false},    // a value is not a name
		{`{"ſ":1,"s":2}`, nil, true}, // Unicode simple folding
	} {
		if got := Folded([]byte(tc.in), tc.known...); got != tc.want {
			t.Errorf("Folded(%s, %q) = %v, want %v", tc.in, tc.known, got, tc.want)
		}
	}
}
