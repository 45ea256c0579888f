#!/usr/bin/env bash
# bench.sh: the benchmarks (used by `make bench`).
#
#   interop/bench.sh                 the side-by-side table (docs/performance.md)
#   BENCH_ARGS='-reps 5' interop/bench.sh
#   interop/bench.sh go              every Go benchmark of the root module, -count=5
#   BENCH=Pool COUNT=10 interop/bench.sh go
#
# The table: builds bin/corral-bench (corral with a native provider), the
# fixture plugin plugins/bench/fixture, the plugin-overhead guests and the
# harness interop/bench, installs the Node peers (interop/install-peers.sh),
# then runs the harness, which starts every server on 127.0.0.1, measures,
# stops them and prints one Markdown table (saved to build/bench/table.md).
# It expects bin/corral and build/plugins (make bench builds them first).
#
# `go` mode runs `go test -run='^$' -bench=$BENCH -benchmem -count=$COUNT ./...`
# in the root module, saves the raw output to build/bench/bench.txt (the format
# benchstat reads, to compare two runs), and prints, per package, each
# benchmark's median over the runs of ns/op, B/op and allocs/op, with the
# spread (min..max) of ns/op.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [[ ${1:-table} == table ]]; then
	out=$root/build/bench
	mkdir -p "$out/plugins"
	echo "bench: building the native-provider server, the fixture plugin, the overhead guests and the harness" >&2
	go build -trimpath -o bin/corral-bench ./cmd/corral-bench
	(cd plugins && GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$out/plugins/bfx000.wasm" ./bench/fixture)
	GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$out/echo-corral.wasm" ./host/plugin/testdata/echoguest
	(cd interop && GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$out/echo-extism.wasm" ./bench/extismguest)
	(cd interop && go build -trimpath -o "$out/bench" ./bench)
	bash interop/install-peers.sh
	cp interop/node/server.mjs interop/.peers/server.mjs
	# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
	exec "$out/bench" -root "$root" ${BENCH_ARGS:-}
fi
[[ $1 == go ]] || { echo "usage: interop/bench.sh [table|go]" >&2; exit 2; }
bench=${BENCH:-.}
count=${COUNT:-5}
out=$root/build/bench
mkdir -p "$out"

echo "bench: go test -run='^\$' -bench='$bench' -benchmem -count=$count ./...  ($(go version | cut -d' ' -f3), $(nproc) cores)"
set +e
go test -run='^$' -bench="$bench" -benchmem -count="$count" ./... 2>&1 | tee "$out/bench.txt"
status=${PIPESTATUS[0]}
set -e

echo
echo "=== summary: median of $count runs (raw output: build/bench/bench.txt) ==="
awk '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function extreme(list, want_max,   n, a, i, m) {
	n = split(list, a, " "); m = a[1] + 0
	for (i = 2; i <= n; i++) if ((want_max && a[i] + 0 > m) || (!want_max && a[i] + 0 < m)) m = a[i] + 0
	return m
}
/^pkg: / { pkg = $2; next }
/^Benchmark/ {
	key = pkg SUBSEP $1
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	for (i = 3; i < NF; i++) {
		if ($(i + 1) == "ns/op") ns[key] = ns[key] " " $i
		if ($(i + 1) == "B/op") bytes[key] = bytes[key] " " $i
		if ($(i + 1) == "allocs/op") allocs[key] = allocs[key] " " $i
	}
}
END {
	if (n == 0) { print "no benchmarks ran"; exit }
	last = ""
	for (k = 1; k <= n; k++) {
		split(order[k], parts, SUBSEP)
		if (parts[1] != last) { printf "\n%s\n", parts[1]; last = parts[1] }
		line = sprintf("  %-48s %14.1f ns/op (%.1f..%.1f)", parts[2], median(ns[order[k]]), extreme(ns[order[k]], 0), extreme(ns[order[k]], 1))
		if (bytes[order[k]] != "") line = line sprintf(" %10.0f B/op %8.0f allocs/op", median(bytes[order[k]]), median(allocs[order[k]]))
		print line
	}
}' "$out/bench.txt"
if ((status != 0)); then
	echo
	echo "bench: go test failed (exit $status); see the FAIL lines above"
fi
exit "$status"
