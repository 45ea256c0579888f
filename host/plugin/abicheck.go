package plugin

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/corral-mcp/corral/abi"
)

var (
	sigMarker = Signature{Results: []ValueType{I32}}
	sigBuffer = Signature{Params: []ValueType{I32}, Results: []ValueType{I32}}
	sigCall   = Signature{Params: []ValueType{I32, I32}, Results: []ValueType{I32}}
	sigInit   = Signature{}
)

var markerRE = regexp.MustCompile(`^corral_abi_v([0-9]+)$`)
var importModuleRE = regexp.MustCompile(`^corral_v([0-9]+)$`)

// wasiModule is the only other import module a guest may use.
const wasiModule = "wasi_snapshot_preview1"

// surface is what checkABI reads of a module: a decoded file (precheck)
// or a compiled module.
type surface interface {
	Exports() map[string]Signature
	Memories() []string
	Imports() []Import
}

// checkABI verifies that a module has every export the ABI requires with
// its exact signature, and imports only known functions. It names
// everything wrong at once.
func checkABI(cm surface, hostFuncs []HostFunc) error {
	exports := cm.Exports()
	if err := shapeHint(exports, cm.Imports()); err != nil {
		return err
	}
	if _, ok := exports[abi.ExportMarker]; !ok {
		// Built for another major? Say so rather than "missing export".
		for name := range exports {
			if m := markerRE.FindStringSubmatch(name); m != nil {
				return fmt.Errorf("built for ABI major %s (exports %s); this host speaks major %d (%s)",
					m[1], name, abi.Major, abi.ExportMarker)
			}
		}
	}
	for _, imp := range cm.Imports() {
		if m := importModuleRE.FindStringSubmatch(imp.Module); m != nil && m[1] != strconv.Itoa(abi.Major) {
			return fmt.Errorf("built for ABI major %s (imports module %s); this host speaks major %d (%s)",
				m[1], imp.Module, abi.Major, abi.ImportModule)
		}
	}

	var problems []string
	hasMemory := false
	for _, name := range cm.Memories() {
		if name == abi.ExportMemory {
			hasMemory = true
		}
	}
	if !hasMemory {
		problems = append(problems, "missing export "+abi.ExportMemory+" (memory)")
	}
	required := []struct {
		name string
		sig  Signature
	}{
		{abi.ExportMarker, sigMarker},
		{abi.ExportBuffer, sigBuffer},
		{abi.ExportCall, sigCall},
	}
	for _, r := range required {
		got, ok := exports[r.name]
		switch {
		case !ok && r.name == abi.ExportMarker:
			problems = append(problems, fmt.Sprintf("missing export %s %s, the version marker every guest exports (ABI.md §3.1; the SDKs add it)", r.name, r.sig))
		case !ok:
			problems = append(problems, fmt.Sprintf("missing export %s %s", r.name, r.sig))
		case !got.Equal(r.sig):
			problems = append(problems, fmt.Sprintf("export %s has signature %s, want %s", r.name, got, r.sig))
		}
	}
	if got, ok := exports[abi.ExportInitialize]; ok && !got.Equal(sigInit) {
		problems = append(problems, fmt.Sprintf("export %s has signature %s, want %s", abi.ExportInitialize, got, sigInit))
	}

	known := make(map[string]Signature, len(hostFuncs))
	for _, hf := range hostFuncs {
		known[hf.Name] = hf.Sig
	}
	for _, imp := range cm.Imports() {
		switch imp.Module {
		case abi.ImportModule:
			want, ok := known[imp.Name]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("imports unknown host function %s.%s (newer ABI minor?)", imp.Module, imp.Name))
			case !imp.Sig.Equal(want):
				problems = append(problems, fmt.Sprintf("imports %s.%s with signature %s, want %s", imp.Module, imp.Name, imp.Sig, want))
			}
		case wasiModule:
			// wazero checks these when linking.
		default:
			problems = append(problems, fmt.Sprintf("imports %s.%s from unknown module %q", imp.Module, imp.Name, imp.Module))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}
