# corral: a WebAssembly-plugin platform for MCP servers.
# `make run` serves the bundled plugins; `make test` runs every test.

GO        ?= go
BIN       := bin/corral
# The optional wasmtime engine (cgo, -tags wasmtime): never in the default build.
BIN_WASMTIME := bin/corral-wasmtime
WASMTIME_CACHE := $(CURDIR)/build/cache-wasmtime
PLUGIN_SRCS := $(wildcard plugins/*/main.go)
PLUGIN_NAMES := $(patsubst plugins/%/main.go,%,$(PLUGIN_SRCS))
PLUGIN_WASM := $(patsubst %,build/plugins/%.wasm,$(PLUGIN_NAMES))
# The example provider in every SDK language (docs/plugins.md §2); each
# language's rule builds build/examples/<lang>.wasm.
EXAMPLE_LANGS := go
EXAMPLE_LANGS += c
EXAMPLE_LANGS += rust
EXAMPLE_LANGS += assemblyscript
# Debian's clang for wasm32-wasi (sdk/install-toolchains.sh c installs it).
WASI_CC := clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor
EXAMPLE_WASM := $(patsubst %,build/examples/%.wasm,$(EXAMPLE_LANGS))
empty :=
comma := ,
JUDGE_WASM = $(subst $(empty) $(empty),$(comma),$(strip $(patsubst %,$(CURDIR)/%,$(EXAMPLE_WASM))))
HTTP_ADDR ?= 127.0.0.1:7337
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME  ?= 20s
SOAK_DURATION ?= 10m

.PHONY: build-wasmtime test-wasmtime bench-density bench-engines bench-notify bench-sdk soak browser test-console test-cluster bench-cluster cluster-parts
.PHONY: jaeger test-traces
.PHONY: examples judge toolchains test-rust test-sdk-c test-sdk-assemblyscript test-scaffold
.PHONY: all build plugins run test test-unit test-race conformance interop bench fuzz testdata check clean peers

all: build plugins

build: $(BIN)

$(BIN): FORCE
	@echo "building $(BIN) from ./cmd/corral (the first build downloads and compiles the Go dependencies: a minute or so; later ones take seconds)"
	$(GO) build -trimpath -o $(BIN) ./cmd/corral

FORCE:

# corral with both engines; `engine: wasmtime` (plugins.engine or
# plugin.<name>.engine) selects wasmtime. Needs cgo and a C compiler.
build-wasmtime:
	CGO_ENABLED=1 $(GO) build -trimpath -tags wasmtime -o $(BIN_WASMTIME) ./cmd/corral

# The engine conformance kit and the plugin runtime on both engines (vet,
# staticcheck, the race detector), then the independent clients and the
# official conformance suite against the wasmtime binary with every plugin
# on wasmtime.
test-wasmtime: build-wasmtime plugins peers examples
	@# corral version names the wasmtime release go.mod pins.
	$(BIN_WASMTIME) version | grep -qx "engine wasmtime $$($(GO) list -m -f '{{.Version}}' github.com/bytecodealliance/wasmtime-go/v39)"
	CGO_ENABLED=1 $(GO) vet -tags wasmtime ./host/plugin/...
	CGO_ENABLED=1 $(GO) run $(STATICCHECK) -tags wasmtime ./host/plugin/...
	CGO_ENABLED=1 $(GO) test -race -tags wasmtime ./host/plugin/...
	@# Every server below shares one compilation cache, filled here: wasmtime
	@# compiles a Go guest about 2x slower than wazero but loads it from the
	@# cache in milliseconds, and the clients judge the protocol, not start-up.
	for f in $(PLUGIN_WASM); do \
		CORRAL_PLUGINS_CACHE_DIR=$(WASMTIME_CACHE) CORRAL_PLUGINS_ENGINE=wasmtime $(BIN_WASMTIME) plugin inspect $$f >/dev/null || exit 1; \
	done
	cd interop && JUDGE_WASM=$(JUDGE_WASM) CORRAL_BIN=$(CURDIR)/$(BIN_WASMTIME) CORRAL_PLUGINS_ENGINE=wasmtime CORRAL_PLUGINS_CACHE_DIR=$(WASMTIME_CACHE) $(GO) test -count=1 ./...
	CORRAL_BIN=$(CURDIR)/$(BIN_WASMTIME) CORRAL_PLUGINS_ENGINE=wasmtime CORRAL_PLUGINS_CACHE_DIR=$(WASMTIME_CACHE) bash interop/conformance.sh

# wazero and wasmtime side by side in one run.
bench-engines: build build-wasmtime plugins
	bash interop/bench-engines.sh

# The bundled plugins, each signed with the repository's public test key
# (testdata/keys; docs/distribution.md): a Go build differs between
# toolchains, so the signatures are made here, never committed.
TEST_KEY := testdata/keys/corral-test.key
plugins: $(PLUGIN_WASM)
	$(GO) run ./cmd/corral plugin sign --key $(TEST_KEY) $(PLUGIN_WASM)

build/plugins/%.wasm: FORCE
	@mkdir -p build/plugins
	@echo "building plugin $@ from plugins/$* (Go for WebAssembly, GOOS=wasip1)"
	cd plugins && GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -buildmode=c-shared -o ../$@ ./$*

# The example providers, one per SDK language, and their judge
# (interop/judge_test.go) on wazero; test-wasmtime judges them on wasmtime.
examples: $(EXAMPLE_WASM)

# Every SDK toolchain; each example's rule installs its own when missing.
toolchains:
	bash sdk/install-toolchains.sh

build/examples/go.wasm: FORCE
	@mkdir -p build/examples
	cd examples/go && GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -buildmode=c-shared -o ../../$@ .

# Rust: Debian's toolchain called by path, offline (a rustup toolchain may
# come first on PATH with no wasm target); sdk/rust and examples/rust share
# one target directory.
RUST_ENV := RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc CARGO_TARGET_DIR=$(CURDIR)/build/rust
CARGO := $(RUST_ENV) /usr/bin/cargo

build/examples/rust.wasm: FORCE
	@bash sdk/install-toolchains.sh rust
	@mkdir -p build/examples
	cd examples/rust && $(CARGO) build --offline --release --quiet --target wasm32-wasi
	cp build/rust/wasm32-wasi/release/example.wasm $@

# The Rust SDK's and the Rust example's unit tests, natively.
test-rust:
	@bash sdk/install-toolchains.sh rust
	cd sdk/rust && $(CARGO) test --offline --quiet
	cd examples/rust && $(CARGO) test --offline --quiet

build/examples/c.wasm: FORCE
	@mkdir -p build/examples
	bash sdk/install-toolchains.sh c
	$(WASI_CC) -Oz -std=c11 -Wall -Wextra -Werror -Wl,--strip-all -I sdk/c -o $@ examples/c/example.c sdk/c/corral.c

# The C SDK's native unit tests (a fake host, sanitizers on), with the
# plugin's registration right and, with -DBAD_SETUP, wrong; then its fuzzer.
test-sdk-c:
	bash sdk/install-toolchains.sh c
	@mkdir -p build/sdk-c
	clang -std=c11 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all -I sdk/c -o build/sdk-c/test sdk/c/test/corral_test.c sdk/c/corral.c
	clang -std=c11 -g -Wall -Wextra -Werror -Wno-unused-function -fsanitize=address,undefined -fno-sanitize-recover=all -DBAD_SETUP -I sdk/c -o build/sdk-c/test-bad sdk/c/test/corral_test.c sdk/c/corral.c
	build/sdk-c/test && build/sdk-c/test-bad
	@# libFuzzer over the dispatcher and the JSON reader, 5 s from the committed seeds.
	clang -std=c11 -g -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I sdk/c -o build/sdk-c/fuzz sdk/c/test/fuzz_request.c sdk/c/corral.c
	rm -rf build/sdk-c/corpus && cp -r sdk/c/test/corpus build/sdk-c/corpus
	build/sdk-c/fuzz -max_total_time=5 -max_len=4096 build/sdk-c/corpus >build/sdk-c/fuzz.log 2>&1 || { tail -n 40 build/sdk-c/fuzz.log; exit 1; }

# AssemblyScript: npm's asc pinned by sdk/assemblyscript/package-lock.json,
# the minimal runtime (examples/assemblyscript/asconfig.json).
ASC := $(CURDIR)/sdk/assemblyscript/node_modules/.bin/asc

build/examples/assemblyscript.wasm: FORCE
	@bash sdk/install-toolchains.sh assemblyscript
	@mkdir -p build/examples
	cd examples/assemblyscript && $(ASC) index.ts --config asconfig.json --outFile ../../$@

# The AssemblyScript SDK's unit tests and the example's, with node's test
# runner (a fake host under node's WebAssembly); includes the check that a
# pooled instance stops growing.
test-sdk-assemblyscript: build/examples/assemblyscript.wasm
	cd sdk/assemblyscript && EXAMPLE_WASM=$(CURDIR)/build/examples/assemblyscript.wasm \
		node --test test/*.test.mjs ../../examples/assemblyscript/example.test.mjs

# `corral plugin new` for each language in an empty directory outside the
# repository: the project builds with the one command it prints, its unit
# tests pass where it prints a test command, and it passes `corral plugin
# check` and the judge (interop TestScaffold). Depends on examples for the
# toolchains. A slow end-to-end suite (four toolchains, minutes): .ci/run
# calls it after make test.
test-scaffold: build examples
	cd interop && SCAFFOLD_LANGS=$(subst $(empty) $(empty),$(comma),$(strip $(EXAMPLE_LANGS))) $(GO) test -count=1 -run '^TestScaffold$$' .

judge: build examples
	cd interop && JUDGE_WASM=$(JUDGE_WASM) $(GO) test -count=1 -run '^TestJudge$$' .

run: build plugins
	@echo "starting corral: it compiles each plugin to machine code (logged as 'plugin file done', n of m; the first start takes longest, later ones load from build/cache), then prints where to connect"
	$(BIN) serve --config testdata/sample/corral.yaml --http $(HTTP_ADDR)

# The whole suite: unit tests (with the race detector), the independent
# clients and the official conformance suite.
test: build plugins test-race interop conformance judge test-rust test-sdk-c test-sdk-assemblyscript

test-unit: build plugins
	$(GO) test ./...

test-race: build plugins
	@# The race detector slows wazero's compiler about sixfold: compile the
	@# bundled Go guests into the shared cache once without it first.
	$(GO) test -count=1 -run '^TestBundledGuestsCompile$$' ./host/registry
	$(GO) test -race ./...
	cd plugins && $(GO) test -race ./...

peers:
	bash interop/install-peers.sh
	bash interop/install-inspector.sh

# Debian's chromium for the console's browser test, installed when missing.
browser:
	bash host/console/install-chromium.sh

# The operator console in headless Chromium (tag browser): the bundled
# plugins, a text and an image resource, a template filled with completion,
# a prompt run, a plugin added; screenshots under build/console/. About
# 25 s, more under load, so it is not part of `make test`; .ci/run runs it.
# Jaeger v1.76.0 built from its module (tools/jaeger) into build/tools/jaeger.
jaeger:
	bash tools/jaeger/install-jaeger.sh

# Traces read back from a real Jaeger (tag jaeger): OTLP/HTTP and gRPC, one
# trace per request with the request, catalog, plugin and host-call spans,
# linked to the client's traceparent, which never forces sampling. Building
# Jaeger cold takes many minutes (docs/tracing.md), so this is not part of
# `make test`. The cost of tracing on and off at 8 clients is
# BenchmarkTracing (cmd/corral/trace_bench_test.go).
test-traces: build plugins jaeger
	$(GO) vet -tags jaeger ./cmd/corral
	CORRAL_JAEGER=$(CURDIR)/build/tools/jaeger $(GO) test -tags jaeger -count=1 -run '^TestTracesInJaeger$$' ./cmd/corral

test-console: build plugins browser
	$(GO) vet -tags browser ./host/console
	$(GO) run $(STATICCHECK) -tags browser ./host/console
	CORRAL_BROWSER_REQUIRED=1 $(GO) test -race -tags browser -count=1 -run '^TestConsoleInBrowser$$' ./host/console

interop: build plugins peers
	cd interop && $(GO) test -count=1 ./...

conformance: build plugins peers
	bash interop/conformance.sh

# The cluster end-to-end (docs/cluster.md): a NATS server built from its
# module (interop/install-nats.sh), three replicas behind bin/corral-rr;
# the HTTP clients of interop/ and the official conformance suite through
# the proxy, then the cluster's own tests (interop/cluster_test.go).
test-cluster: cluster-parts peers
	cd interop && CORRAL_TEST_CLUSTER=1 $(GO) test -count=1 -run '^(TestGoSDK|TestMcpGo|TestTSClient|TestGoSDKInputBridge2025|TestCluster.*)$$' .

# What the cluster tests and benchmarks run besides bin/corral: a NATS
# server built from its module, the round-robin proxy, two fixtures.
cluster-parts: build plugins
	bash interop/install-nats.sh >/dev/null
	$(GO) build -trimpath -o bin/corral-rr ./cmd/corral-rr
	@mkdir -p build/cluster
	cd plugins && GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -buildmode=c-shared -o ../build/cluster/bfx000.wasm ./bench/fixture
	cd plugins && GOOS=wasip1 GOARCH=wasm $(GO) build -trimpath -buildmode=c-shared -o ../build/cluster/kvstore.wasm ./testing/kvstore

# The cluster's benchmarks (docs/cluster.md; about 3 min with the builds):
# on a NATS server in the test process, kv get/set on JetStream against the
# local stores, notification fan-out to 1,000 listeners at the hub, the
# session store and the tasks' cross-replica reads and forwarding; then on
# the wire, with real processes, 1,000 listen streams over three replicas
# against one process, and reads through bin/corral-rr in front of one
# replica and of three.
bench-cluster: cluster-parts
	$(GO) test -run '^$$' -bench 'KV|CrossReplica|SessionGet|Task' -benchtime 200x ./host/cluster
	cd interop && CORRAL_TEST_CLUSTER=1 $(GO) test -count=1 -run '^$$' -bench '^BenchmarkClusterNotify' -benchtime 20x .
	cd interop && CORRAL_TEST_CLUSTER=1 $(GO) test -count=1 -run '^$$' -bench '^BenchmarkClusterThroughput' -benchtime 3000x .

# Row 5 of make bench at full size (docs/performance.md#density-plugins-per-process): 1,000
# Go-guest and 10,000 small plugins per process, on wazero and wasmtime.
# Cold, about 85 minutes and 40 GB of disk (wazero 30 min, wasmtime 50, at
# 2 cores; DENSITY_ENGINES=wazero for one); the script checks df and
# memory first and scales the Go fleet down, with a note, when short.
bench-density: build build-wasmtime
	bash interop/bench-density.sh

# The table of docs/performance.md and the supply chain's costs; the heavy
# areas have their own targets: bench-engines, bench-notify, bench-sdk,
# bench-density, bench-cluster (their run times: docs/performance.md).
bench: build plugins
	bash interop/bench.sh
	bash interop/bench-supply.sh

# The notification load tests: 1,000 listen streams, a slow WebSocket consumer.
bench-notify:
	bash interop/bench-notify.sh

# The example provider as each SDK builds it, side by side.
bench-sdk: build examples
	bash sdk/bench.sh

fuzz:
	bash .ci/fuzz.sh $(FUZZTIME)

# A bounded loopback soak: several principals, a policy, plugin reloads;
# fails on a lost or misrouted response, a leak across principals or a
# growing heap (docs/security.md). SOAK_DURATION=30s for a smoke run.
soak: build plugins
	$(GO) run ./cmd/corral-soak -bin $(BIN) -plugins build/plugins -duration $(SOAK_DURATION)

testdata:
	bash testdata/build.sh

check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	$(GO) mod tidy -diff
	cd plugins && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./... && $(GO) mod tidy -diff
	cd interop && $(GO) vet ./... && $(GO) mod tidy -diff

clean:
	rm -rf bin build
