#!/usr/bin/env bash
# bench-engines.sh: wazero and wasmtime side by side, from one run
# (`make bench-engines`).
#
#   interop/bench-engines.sh                every measure, -count=3
#   COUNT=5 BENCHTIME=2s interop/bench-engines.sh
#
# Runs BenchmarkEngine of host/plugin (see enginebench_test.go) in a test
# binary built with -tags wasmtime, so both engines run the same work in the
# same process, saves the raw output to build/bench/engines.txt (benchstat
# reads it), and prints one Markdown table: per measure and module the median
# over the runs for each engine and wasmtime's advantage (above 1: wasmtime
# takes less time or memory, or serves more requests per second). The last rows are the sizes of bin/corral
# (wazero only) and bin/corral-wasmtime (both engines), which `make
# bench-engines` builds first. Needs cgo and a C compiler.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
count=${COUNT:-3}
benchtime=${BENCHTIME:-1s}
out=$root/build/bench
mkdir -p "$out"

echo "bench-engines: go test -tags wasmtime -run='^\$' -bench='^BenchmarkEngine\$' -benchmem -count=$count -benchtime=$benchtime ./host/plugin/  ($(go version | cut -d' ' -f3), $(nproc) cores)" >&2
raw=$(mktemp "$out/.engines-XXXXXX") # a concurrent run must not write into ours
trap 'rm -f "$raw"' EXIT
set +e
CGO_ENABLED=1 go test -tags wasmtime -run='^$' -bench='^BenchmarkEngine$' -benchmem -count="$count" -benchtime="$benchtime" ./host/plugin/ >"$raw" 2>&1
status=$?
set -e
if ((status != 0)); then
	cat "$raw"
	echo "bench-engines: go test failed (exit $status)" >&2
	exit "$status"
fi
mv "$raw" "$out/engines.txt"

size() { if [[ -f $1 ]]; then stat -c %s "$1"; else echo 0; fi; }

awk -v count="$count" -v wz_bin="$(size bin/corral)" -v wt_bin="$(size bin/corral-wasmtime)" '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function dur(ns) {
	if (ns >= 1e9) return sprintf("%.2f s", ns / 1e9)
	if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%.0f ns", ns)
}
function show(unit, v) {
	if (v == "") return "–"
	if (unit == "ns/op") return dur(v)
	if (unit == "req/s") return sprintf("%.0f req/s", v)
	if (unit == "MiB/instance") return sprintf("%.2f MiB", v)
	if (unit == "B") return sprintf("%.1f MB", v / 1e6)
	return v " " unit
}
/^BenchmarkEngine\// {
	name = $1; sub(/-[0-9]+$/, "", name)
	n = split(name, p, "/") # BenchmarkEngine, measure, module, engine
	key = p[2] " " p[3]
	if (!(key in seen)) { seen[key] = 1; order[++rows] = key }
	unit = "ns/op"
	if (p[2] == "throughput") unit = "req/s"
	if (p[2] == "memory") unit = "MiB/instance"
	units[key] = unit
	for (i = 3; i < NF; i++) if ($(i + 1) == unit) val[key, p[4]] = val[key, p[4]] " " $i
	if (p[2] == "call") for (i = 3; i < NF; i++) if ($(i + 1) == "allocs/op") allocs[key, p[4]] = allocs[key, p[4]] " " $i
}
END {
	printf "| measure | module | wazero | wasmtime | wasmtime advantage |\n| --- | --- | ---: | ---: | ---: |\n"
	for (r = 1; r <= rows; r++) {
		key = order[r]; split(key, k, " "); unit = units[key]
		wz = (val[key, "wazero"] != "") ? median(val[key, "wazero"]) : ""
		wt = (val[key, "wasmtime"] != "") ? median(val[key, "wasmtime"]) : ""
		ratio = "–"
		if (wz != "" && wt != "" && wt + 0 != 0 && wz + 0 > 0) {
			# above 1: wasmtime is better (less time or memory, more req/s)
			ratio = (unit == "req/s") ? sprintf("%.2f×", wt / wz) : sprintf("%.2f×", wz / wt)
		}
		a = show(unit, wz); b = show(unit, wt)
		if (k[1] == "call") {
			a = a sprintf(", %d allocs", median(allocs[key, "wazero"]))
			b = b sprintf(", %d allocs", median(allocs[key, "wasmtime"]))
		}
		printf "| %s | %s | %s | %s | %s |\n", k[1], k[2], a, b, ratio
	}
	ratio = (wz_bin > 0 && wt_bin > 0) ? sprintf("+%.1f MB", (wt_bin - wz_bin) / 1e6) : "–"
	printf "| binary size | bin/corral vs bin/corral-wasmtime | %s | %s | %s |\n", show("B", wz_bin), show("B", wt_bin), ratio
	printf "\nMedians of %d runs; raw output: build/bench/engines.txt.\n", count
}' "$out/engines.txt" | tee "$out/engines.md"
