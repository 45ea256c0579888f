#!/usr/bin/env bash
# bench-instructions.sh: instructions per request of the in-process stack
# (BenchmarkStack in cmd/corral-bench) at two revisions, side by side.
#
#   interop/bench-instructions.sh OLD [NEW]     NEW defaults to the work tree
#
# On a shared two-core machine wall-clock benchmarks of two revisions swing
# by ±40 % with the load; an instruction count does not. Each revision's
# benchmark binary runs under valgrind's callgrind twice per row, at 1,000
# and 4,000 iterations, and the difference divided by 3,000 is what one
# request costs, set-up excluded. GOMAXPROCS=1 and no asynchronous
# preemption keep Go's runtime within what callgrind follows, and GOGC=off
# keeps the collector's timing out of the count (allocations still cost
# what malloc costs). valgrind is
# installed from Debian's packages when missing. Counts include the
# benchmark's own request building (httptest); compare revisions, not
# absolute figures.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
old=${1:?usage: bench-instructions.sh OLD [NEW]}
new=${2:-}
rows=(resources/read prompts/get completion/complete resources/list)

if ! command -v valgrind >/dev/null; then
	sudo=()
	[[ $(id -u) -eq 0 ]] || sudo=(sudo)
	"${sudo[@]}" flock /tmp/corral-apt.lock env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
fi

tmp=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; [[ -z $new ]] || git -C "$root" worktree remove --force "$tmp/new" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

# tree REV DIR: a checkout of REV at DIR (the work tree itself for "").
tree() {
	if [[ -z $1 ]]; then
		echo "$root"
	else
		git -C "$root" worktree add -q --detach "$2" "$1"
		echo "$2"
	fi
}

# count BIN DIR ROW N: callgrind's instruction total for N iterations of ROW.
count() {
	(cd "$2" && GOGC=off GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$1" -test.run '^$' -test.bench "Stack/$3\$" -test.benchtime "$4x" -test.cpu 1 2>&1) |
		sed -n 's/.*Collected : //p'
}

declare -A dir
for v in old new; do
	rev=$old
	[[ $v == new ]] && rev=$new
	d=$(tree "$rev" "$tmp/$v")
	(cd "$d" && go test -c -o "$tmp/bench-$v" ./cmd/corral-bench)
	dir[$v]=$d/cmd/corral-bench
done

printf '%-22s %12s %12s %8s\n' row "$old" "${new:-work tree}" ratio
for row in "${rows[@]}"; do
	declare -A per
	for v in old new; do
		a=$(count "$tmp/bench-$v" "${dir[$v]}" "$row" 1000)
		b=$(count "$tmp/bench-$v" "${dir[$v]}" "$row" 4000)
		per[$v]=$(((b - a) / 3000))
	done
	printf '%-22s %12d %12d %8s\n' "$row" "${per[old]}" "${per[new]}" \
		"$(awk -v o="${per[old]}" -v n="${per[new]}" 'BEGIN { printf "%.3f", n / o }')"
done
