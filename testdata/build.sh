#!/usr/bin/env bash
# Rebuilds the hand-written adversarial fixtures: testdata/wat/*.wat ->
# testdata/wat/*.wasm (committed next to their sources), with wabt's
# wat2wasm, and validates each result. Installs Debian's wabt when wat2wasm
# is missing. Run from anywhere: `bash testdata/build.sh` or `make testdata`.
set -euo pipefail

dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/wat"

if ! command -v wat2wasm >/dev/null 2>&1; then
	echo "wat2wasm not found; installing wabt" >&2
	sudo=""
	if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq wabt
fi

status=0
for src in "$dir"/*.wat; do
	out="${src%.wat}.wasm"
	if ! wat2wasm "$src" -o "$out"; then
		echo "FAIL $src" >&2
		status=1
		continue
	fi
	if command -v wasm-validate >/dev/null 2>&1 && ! wasm-validate "$out"; then
		echo "INVALID $out" >&2
		status=1
		continue
	fi
	echo "built $(basename "$out") ($(wc -c <"$out") bytes)"
done
exit $status
