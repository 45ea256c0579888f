#!/usr/bin/env bash
# bench.sh: run the root module's benchmarks (used by `make bench`).
#
#   interop/bench.sh            every benchmark, -count=5
#   BENCH=Pool COUNT=10 interop/bench.sh
#
# Runs `go test -run='^$' -bench=$BENCH -benchmem -count=$COUNT ./...` in the
# root module, saves the raw output to build/bench/bench.txt (the format
# benchstat reads, to compare two runs), and prints, per package, each
# benchmark's median over the runs of ns/op, B/op and allocs/op, with the
# spread (min..max) of ns/op.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
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
