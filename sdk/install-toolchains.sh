#!/usr/bin/env bash
# install-toolchains.sh: the guest toolchains the SDK examples build with,
# installed only when missing (called by `make examples`; docs/plugins.md).
#
#   sdk/install-toolchains.sh                  every language
#   sdk/install-toolchains.sh c rust           only these
#
#   c               Debian's clang, lld, wasi-libc and libclang-rt-14-dev-wasm32
#                   (clang --target=wasm32-wasi -mexec-model=reactor), and
#                   libclang-rt-14-dev, the native sanitizers and libFuzzer
#                   of `make test-sdk-c` (only recommended by clang)
#   rust            Debian's rustc, cargo and libstd-rust-dev-wasm32 (target
#                   wasm32-wasi), used offline with no crates; the build calls
#                   /usr/bin/cargo and /usr/bin/rustc, never a rustup
#                   toolchain that may come first on PATH
#   assemblyscript  npm's assemblyscript, pinned by sdk/assemblyscript's
#                   package-lock.json (npm ci into sdk/assemblyscript/node_modules)
#
# apt-get runs as root, or through sudo otherwise, under
# flock /tmp/corral-apt.lock so that two installs never collide. Nothing is
# downloaded when everything is present.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
langs=("$@")
((${#langs[@]})) || langs=(c rust assemblyscript)

# missing prints the Debian packages of $@ that are not installed.
missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
	done
}

apt_install() {
	local sudo=()
	[[ $(id -u) -eq 0 ]] || sudo=(sudo)
	echo "install-toolchains: apt-get install $*" >&2
	"${sudo[@]}" flock /tmp/corral-apt.lock env DEBIAN_FRONTEND=noninteractive apt-get update -qq
	"${sudo[@]}" flock /tmp/corral-apt.lock env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

debian() {
	command -v dpkg-query >/dev/null || { echo "install-toolchains: not a Debian system; install $* yourself" >&2; exit 1; }
	local need
	need=$(missing "$@")
	[[ -z $need ]] || apt_install $need # word splitting: one package a word
}

for lang in "${langs[@]}"; do
	case $lang in
	c) debian clang lld wasi-libc libclang-rt-14-dev-wasm32 libclang-rt-14-dev ;;
	rust) debian rustc cargo libstd-rust-dev-wasm32 ;;
	assemblyscript)
		dir=$root/sdk/assemblyscript
		if [[ -f $dir/package-lock.json && ! -x $dir/node_modules/.bin/asc ]]; then
			command -v npm >/dev/null || debian nodejs npm
			echo "install-toolchains: npm ci in sdk/assemblyscript" >&2
			(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
		fi
		;;
	*) echo "install-toolchains: unknown language $lang (c, rust, assemblyscript)" >&2; exit 2 ;;
	esac
done
