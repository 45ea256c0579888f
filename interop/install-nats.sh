#!/usr/bin/env bash
# install-nats.sh: build the real NATS server that the cluster tests run
# (make test-cluster, make bench-cluster) from its Go module, into the
# ignored build/tools/nats-server, only when it is missing or another
# version. Prints the binary's path.
#
#   interop/install-nats.sh            build/tools/nats-server v2.15.2
#
# The module comes from the Go module proxy (GOPROXY as configured); the
# first build takes a minute or so on two cores. Debian's nats-server
# package (2.9) is too old for the JetStream KV features the cluster uses.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
version=v2.15.2
bin=$root/build/tools/nats-server

log() { printf 'install-nats: %s\n' "$*" >&2; }

if [[ -x $bin ]] && "$bin" --version 2>/dev/null | grep -q "v${version#v}\$"; then
	echo "$bin"
	exit 0
fi
command -v go >/dev/null || { log "go is not installed"; exit 1; }
mkdir -p "$root/build/tools"
log "building nats-server $version from github.com/nats-io/nats-server/v2 (a minute or so the first time)"
# Outside the repository's modules, so no go.mod of ours is consulted.
(cd "$root/build/tools" && GOBIN=$root/build/tools GOFLAGS=-trimpath go install "github.com/nats-io/nats-server/v2@$version")
"$bin" --version >&2
echo "$bin"
