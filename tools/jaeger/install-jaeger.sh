#!/usr/bin/env bash
# install-jaeger.sh: build Jaeger v1.76.0 (cmd/jaeger, pinned as a tool in
# tools/jaeger/go.mod) to build/tools/jaeger for the trace test
# (cmd/corral TestTracesInJaeger, make test-traces), only when missing or
# built from another go.sum. From the Go module proxy only; a cold build
# is long (see docs/tracing.md), a second run returns at once.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
src=$root/tools/jaeger
out=$root/build/tools/jaeger
stamp=$out.sum

log() { printf 'install-jaeger: %s\n' "$*" >&2; }

want=$(sha256sum "$src/go.mod" "$src/go.sum" | sha256sum | cut -d' ' -f1)
if [[ -x $out && -f $stamp && $(cat "$stamp") == "$want" ]]; then
	log "up to date: $out"
	exit 0
fi
mkdir -p "$(dirname "$out")"
log "building github.com/jaegertracing/jaeger/cmd/jaeger v1.76.0 (a cold build takes many minutes)"
start=$SECONDS
(cd "$src" && go build -trimpath -o "$out" github.com/jaegertracing/jaeger/cmd/jaeger)
echo "$want" >"$stamp"
log "built $out in $((SECONDS - start)) s"
