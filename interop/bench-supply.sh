#!/usr/bin/env bash
# bench-supply.sh: the supply chain's costs (part of `make bench`;
# docs/performance.md, "Signatures and registries"): the per-plugin
# signature check beside the sha256 of a bundled plugin, the pull and
# check of one plugin from a loopback registry, and start-up on the
# bundled plugins with and without a trust policy. Short fixed iteration
# counts keep it around a minute. Expects build/plugins (make plugins).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
run() { go test -run='^$' -bench="$1" -benchtime="$2" -benchmem "$3" | grep -E '^(Benchmark|ok|FAIL)'; }
echo "bench-supply: $(go version | cut -d' ' -f3), $(nproc) cores"
run '^BenchmarkCheck$' 20x ./host/trust
run '^BenchmarkPullVerify$' 10x ./host/oci
run '^BenchmarkStartWithPolicy$' 3x ./host/registry
