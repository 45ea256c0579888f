#!/usr/bin/env bash
# bench-notify.sh: the notification load tests (`make bench-notify`).
#
#   interop/bench-notify.sh            5 iterations of each
#   COUNT=10 interop/bench-notify.sh
#
# BenchmarkListenFanout1000: 1,000 concurrent subscriptions/listen streams
# over Streamable HTTP on loopback (10 URIs x 100 streams), one burst
# updating every URI per iteration; every stream must receive exactly its
# update and nothing else. p50-ms / p99-ms are the fan-out latencies from
# publish to the client reading the event.
# BenchmarkWSSlowConsumer: 200 WebSocket listen streams plus one client that
# stops reading; bursts of 4 KB updates until the slow one is cut (close
# 1008), then the p50/p99 latency the 200 others see.
# Raw output goes to build/bench/notify.txt.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=$root/build/bench
mkdir -p "$out"
count=${COUNT:-5}
echo "bench-notify: go test -bench 'ListenFanout1000|WSSlowConsumer' -benchtime ${count}x ./host/transport ($(nproc) cores)"
go test -run='^$' -bench='ListenFanout1000|WSSlowConsumer' -benchtime="${count}x" ./host/transport | tee "$out/notify.txt"
