#!/usr/bin/env bash
# .ci/fuzz.sh FUZZTIME: run every native fuzz target of the root module
# (used by `make fuzz`, FUZZTIME defaults to 20s there).
#
# Finds each `func FuzzXxx(f *testing.F)` in the _test.go files of the root
# module's packages and runs it alone for FUZZTIME:
#   go test -run='^$' -fuzz='^FuzzXxx$' -fuzztime=FUZZTIME PKG
# New crashers are written by go test to PKG/testdata/fuzz/FuzzXxx/ and make
# the run fail. Exits 1 if any target failed, 2 on bad usage.
set -euo pipefail

fuzztime=${1:-}
if [[ -z $fuzztime || $# -ne 1 ]]; then
	echo "usage: .ci/fuzz.sh FUZZTIME   (e.g. 20s, 1m, 500x)" >&2
	exit 2
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# package import path and folder, for every package of the root module
# (nested modules such as interop/ and sdk-guest/ are not part of ./...).
mapfile -t pkgs < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)

targets=()
for line in "${pkgs[@]}"; do
	pkg=${line%% *}
	dir=${line#* }
	shopt -s nullglob
	files=("$dir"/*_test.go)
	shopt -u nullglob
	((${#files[@]})) || continue
	while read -r name; do
		[[ -n $name ]] && targets+=("$pkg $name")
	done < <(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\([A-Za-z_][A-Za-z0-9_]* \*testing\.F\).*/\1/p' "${files[@]}" | sort -u)
done

if ((${#targets[@]} == 0)); then
	echo "fuzz: no fuzz targets in the root module"
	exit 0
fi

echo "fuzz: ${#targets[@]} target(s), $fuzztime each"
failed=()
for t in "${targets[@]}"; do
	pkg=${t% *}
	name=${t#* }
	echo "--- $pkg $name"
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" "$pkg"; then
		failed+=("$pkg.$name")
	fi
done

echo
if ((${#failed[@]})); then
	echo "fuzz: ${#failed[@]} of ${#targets[@]} target(s) failed: ${failed[*]}"
	exit 1
fi
echo "fuzz: ${#targets[@]} passed, 0 failed"
