#!/usr/bin/env bash
# bench.sh: the example provider of docs/plugins.md §2 as each SDK builds it,
# side by side, one row per language (`make bench-sdk`, which builds
# build/examples/*.wasm first).
#
#   sdk/bench.sh                       every example in build/examples, -count=3
#   COUNT=5 BENCHTIME=2s sdk/bench.sh     (defaults: 3 runs of 500ms)
#
# Runs host/plugin's BenchmarkSDKExample (compile cold and cached,
# instantiate, resident memory per warm instance, on the default engine)
# and interop's BenchmarkJudge (resources/read and completion/complete
# through bin/corral's HTTP stack with the Go SDK client), saves the raw
# output to build/bench/sdk-*.txt (benchstat reads it), and prints one
# Markdown table of medians, with each language's read latency against
# the Go build's.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
count=${COUNT:-3}
benchtime=${BENCHTIME:-500ms}
out=$root/build/bench
mkdir -p "$out"

files=()
for lang in go c assemblyscript rust; do
	[[ -f build/examples/$lang.wasm ]] && files+=("$root/build/examples/$lang.wasm")
done
((${#files[@]})) || { echo "sdk/bench.sh: no build/examples/*.wasm (make examples)" >&2; exit 1; }
list=$(IFS=,; echo "${files[*]}")

run() { # run NAME DIR BENCH: go test -bench BENCH in DIR, raw output to build/bench/sdk-NAME.txt
	local raw
	raw=$(mktemp "$out/.sdk-XXXXXX")
	echo "sdk/bench.sh: (cd $2 && go test -run='^\$' -bench='$3' -count=$count -benchtime=$benchtime)" >&2
	if ! (cd "$2" && JUDGE_WASM=$list go test -run='^$' -bench="$3" -count="$count" -benchtime="$benchtime" . >"$raw" 2>&1); then
		grep -v '^\s*{' "$raw" | tail -40 >&2
		rm -f "$raw"
		echo "sdk/bench.sh: $3 failed" >&2
		exit 1
	fi
	mv "$raw" "$out/sdk-$1.txt"
}
run engine host/plugin '^BenchmarkSDKExample$'
run http interop '^BenchmarkJudge$'

sizes=""
for f in "${files[@]}"; do sizes+="$(basename "$f" .wasm)=$(stat -c %s "$f") "; done

awk -v count="$count" -v sizes="$sizes" '
function median(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function dur(ns) {
	if (ns == "") return "–"
	if (ns >= 1e9) return sprintf("%.2f s", ns / 1e9)
	if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%.0f ns", ns)
}
function size(b) { return b >= 1e6 ? sprintf("%.2f MB", b / 1e6) : sprintf("%.1f KB", b / 1e3) }
BEGIN {
	n = split(sizes, s, " ")
	for (i = 1; i <= n; i++) { split(s[i], kv, "="); langs[i] = kv[1]; bytes[kv[1]] = kv[2] }
	nlangs = n
}
/^Benchmark(SDKExample|Judge)\// {
	name = $1; sub(/-[0-9]+$/, "", name)
	split(name, p, "/") # Benchmark…, measure, language
	unit = (p[2] == "memory") ? "MiB/instance" : "ns/op"
	for (i = 3; i < NF; i++) if ($(i + 1) == unit) val[p[2], p[3]] = val[p[2], p[3]] " " $i
}
END {
	printf "| language | .wasm | compile cold | compile cached | instantiate | memory / instance | resources/read | completion/complete | read vs Go |\n"
	printf "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"
	goread = (val["read", "go"] != "") ? median(val["read", "go"]) : ""
	for (i = 1; i <= nlangs; i++) {
		l = langs[i]
		printf "| %s | %s", l, size(bytes[l])
		split("compile-cold compile-cached instantiate", ms, " ")
		for (k = 1; k <= 3; k++) printf " | %s", (val[ms[k], l] != "") ? dur(median(val[ms[k], l])) : "–"
		printf " | %s", (val["memory", l] != "") ? sprintf("%.2f MiB", median(val["memory", l])) : "–"
		read = (val["read", l] != "") ? median(val["read", l]) : ""
		printf " | %s | %s", dur(read), (val["complete", l] != "") ? dur(median(val["complete", l])) : "–"
		printf " | %s |\n", (read != "" && goread != "" && goread > 0) ? sprintf("%.2f×", read / goread) : "–"
	}
	printf "\nMedians of %d runs on the default engine; raw output: build/bench/sdk-engine.txt, build/bench/sdk-http.txt.\n", count
}' "$out/sdk-engine.txt" "$out/sdk-http.txt" | tee "$out/sdk.md"
