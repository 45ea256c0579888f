#!/usr/bin/env bash
# bench-density.sh: make bench-density, row 5 of make bench at full size
# (docs/performance.md#density-plugins-per-process): 1,000 distinct Go-guest plugins of 1,000
# resources each and 10,000 small generated plugins, each in one corral
# process, on wazero and on wasmtime. It prints resident memory idle and
# under load, time to ready with a cold and a warm cache, resources/list
# first and last page p50 against one plugin, and the first call of a
# sleeping plugin (when the binary has limits.sleepAfter).
#
#   interop/bench-density.sh
#   DENSITY_GO=200 DENSITY_SMALL=2000 DENSITY_ENGINES=wazero interop/bench-density.sh
#   BENCH_ARGS='-reps 5' interop/bench-density.sh
#
# What it needs at full size, on 2 cores: compiling 1,000 Go modules cold
# takes about 30 minutes on wazero and 50 on wasmtime, and their
# compilation cache about 17 MB each on wazero (22 with its interrupt
# rewrites; 13 on wasmtime), plus 4 MB per plugin file; 10,000
# small plugins take seconds and a few tens of MB. Memory: about 40 MiB per
# Go plugin while every plugin stays hot (a binary without sleeping
# plugins), which caps this 24 GiB machine near 500 of them. The script
# checks free disk and memory first and scales the Go fleet down, with a
# note, when they are short. It expects bin/corral and, for wasmtime,
# bin/corral-wasmtime (make bench-density builds both).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=$root/build/bench-density
mkdir -p "$out/plugins" "$out/logs"

want_go=${DENSITY_GO:-1000}
want_small=${DENSITY_SMALL:-10000}
engines=${DENSITY_ENGINES:-wazero,wasmtime}
n_engines=$(tr ',' '\n' <<<"$engines" | grep -c .)

# Per-plugin needs (measured on this machine, 2026-12-01): a Go guest's
# wazero cache entry is 17 MB (wasmtime's are counted the same), its file
# 4 MB, and on wazero its interrupt rewrite (plugins.cacheDir/interrupt)
# 5 MB more; a small plugin's file and cache entry a few KiB each.
go_disk_mb=$((4 + 17 * n_engines))
if grep -qw wazero <<<"$engines"; then go_disk_mb=$((go_disk_mb + 5)); fi
small_disk_kb=$((8 + 8 * n_engines))
reserve_mb=4096 # left free for everyone else on the disk

if [[ ",$engines," == *,wasmtime,* && ! -x bin/corral-wasmtime ]]; then
	echo "bench-density: bin/corral-wasmtime missing (make build-wasmtime)" >&2
	exit 1
fi

# A binary with sleeping plugins holds a sleeping Go plugin in a few MiB;
# without them every plugin stays hot at about 40 MiB.
probe=$out/sleep-probe.yaml
printf 'plugin:\n  probe:\n    limits:\n      sleepAfter: 1s\n' >"$probe"
if bin/corral config check "$probe" >/dev/null 2>&1; then
	go_mem_mb=8
	sleeping="sleeping plugins (limits.sleepAfter)"
else
	go_mem_mb=40
	sleeping="no limits.sleepAfter in bin/corral: every plugin stays hot"
fi

avail_mb=$(($(df -Pk "$out" | awk 'NR == 2 { print $4 }') / 1024))
mem_mb=$(($(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo) / 1024))
small_mb=$((want_small * small_disk_kb / 1024))

n_go=$want_go
fit_disk=$(((avail_mb - reserve_mb - small_mb) / go_disk_mb))
fit_mem=$((mem_mb * 6 / 10 / go_mem_mb))
((fit_disk < 0)) && fit_disk=0
if ((n_go > fit_disk)); then n_go=$fit_disk; fi
if ((n_go > fit_mem)); then n_go=$fit_mem; fi
((n_go > 1)) || n_go=0

# Minutes per 1,000 Go guests compiled cold on 2 cores (measured
# 2026-12-01: 30 on wazero, 1.8 s each; 50 on wasmtime, 3 s each).
minutes=3
for e in ${engines//,/ }; do
	per=30
	[[ $e == wasmtime ]] && per=50
	minutes=$((minutes + n_go * per / 1000 + 4))
done
echo "bench-density: $n_go Go plugins and $want_small small plugins on $engines ($sleeping)"
echo "bench-density: needs about $((n_go * go_disk_mb / 1024 + small_mb / 1024 + 1)) GB of disk under build/ ($avail_mb MB free) and about $minutes minutes on $(nproc) cores"
if ((n_go < want_go)); then
	echo "bench-density: NOTE: scaled down from $want_go to $n_go Go plugins:" \
		"$avail_mb MB of disk free (each Go plugin needs $go_disk_mb MB, $reserve_mb MB kept free)," \
		"$mem_mb MB of memory available (each Go plugin about $go_mem_mb MiB; 60 % of it used)"
fi

echo "bench-density: building the fixture plugin and the harness" >&2
(cd plugins && GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o "$out/plugins/bfx000.wasm" ./bench/fixture)
(cd interop && go build -trimpath -o "$out/bench" ./bench)

t0=$(date +%s)
# shellcheck disable=SC2086 # BENCH_ARGS is a list of flags
"$out/bench" -root "$root" -out "$out" -rows 5 -title "make bench-density" -engines "$engines" \
	-density-go "$n_go" -density-small "$want_small" -cold -wake-budget 5m -timeout 240m ${BENCH_ARGS:-}
s=$(($(date +%s) - t0))
echo "bench-density: took $((s / 60)) min $((s % 60)) s; the table is in build/bench-density/table.md"
if ((n_go < want_go)); then
	echo "bench-density: NOTE: the Go fleet was scaled down to $n_go of $want_go (see above)"
fi
