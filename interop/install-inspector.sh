#!/usr/bin/env bash
# install-inspector.sh: install the MCP Inspector (@modelcontextprotocol/inspector
# 2.12.0, pinned in interop/inspector/package.json and its package-lock.json)
# into the ignored folder interop/.peers/inspector/, from the npm registry
# (run by `make peers`, after install-peers.sh, whose Node 22 runs it).
# interop/readme_test.go runs the README's Inspector commands with it. It is
# kept apart from the other peers so that its hundred-odd packages never
# change their lock. A second run with nothing changed returns at once.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$root/interop/inspector
dst=$root/interop/.peers/inspector
stamp=$dst/.installed
want=2.12.0
launcher=$dst/node_modules/@modelcontextprotocol/inspector/package.json

log() { printf 'install-inspector: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

fingerprint() {
	cat "$src/package.json" "$src/package-lock.json" 2>/dev/null | sha256sum | cut -d' ' -f1
}

if [[ -f $stamp && $(cat "$stamp") == "$(fingerprint)" && -f $launcher ]]; then
	log "up to date in interop/.peers/inspector (inspector $want)"
	exit 0
fi
command -v npm >/dev/null 2>&1 || die "npm is missing: run interop/install-peers.sh first"

log "installing the MCP Inspector $want into interop/.peers/inspector"
mkdir -p "$dst"
rm -rf "$dst/node_modules" "$stamp"
cp "$src/package.json" "$dst/package.json"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
# --ignore-scripts: the CLI needs no install script (its optional keyring
# binding is never used by --cli); the engine check is npm's own Node, not
# the Node 22 that runs the Inspector.
if [[ -f $src/package-lock.json ]]; then
	cp "$src/package-lock.json" "$dst/package-lock.json"
	(cd "$dst" && npm ci --ignore-scripts --loglevel=error)
else
	log "no package-lock.json: resolving once and saving the lock to interop/inspector/"
	(cd "$dst" && npm install --ignore-scripts --save-exact --loglevel=error)
	cp "$dst/package-lock.json" "$src/package-lock.json"
fi
got=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$launcher" | head -1)
[[ $got == "$want" ]] || die "inspector is $got, want $want"
fingerprint >"$stamp"
log "installed: inspector $got"
