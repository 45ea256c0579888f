#!/usr/bin/env bash
# install-chromium.sh: install Debian's chromium for the console's browser
# test (host/console, TestConsoleInBrowser), only when it is missing. Run by
# `make browser`; a second run returns at once.
set -euo pipefail

log() { printf 'install-chromium: %s\n' "$*" >&2; }

if command -v chromium >/dev/null 2>&1; then
	log "chromium present: $(command -v chromium)"
	exit 0
fi
command -v apt-get >/dev/null 2>&1 || { log "chromium is missing and apt-get is not available; install Chromium"; exit 1; }
sudo=""
[[ $(id -u) -eq 0 ]] || sudo="sudo"
log "chromium is missing: installing Debian's chromium"
# One apt at a time across the repo's install scripts.
$sudo flock /tmp/corral-apt.lock env DEBIAN_FRONTEND=noninteractive apt-get update -qq
$sudo flock /tmp/corral-apt.lock env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { log "chromium still missing after apt-get install"; exit 1; }
log "installed $(command -v chromium)"
