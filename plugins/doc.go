// Package plugins holds corral's bundled example plugins, one command per
// directory, each built to build/plugins/<name>.wasm by the Makefile:
//
//	cd plugins && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o ../build/plugins/files.wasm ./files
//
// files serves the granted directory trees as file:// resources; issues is
// an issue tracker over a JSON data file with per-group visibility;
// conformance serves the fixtures the official MCP conformance suite
// expects.
package plugins
