// Package registry serves the plugins of one directory and keeps the
// catalog in step with it.
//
// A [Registry] watches the directory (fsnotify events, debounced, plus a
// periodic rescan as a safety net). Each added, replaced or removed *.wasm
// file is read once its size and modification time have settled, compiled
// off the request path through a [Loader], checked against the operator's
// settings (enabled, sha256 pin, grants, limits) and instantiated. The
// registry then builds a new catalog.Set and swaps it in atomically: requests
// in flight finish on the old Set, and plugins it no longer uses are closed
// once their calls have drained. Unchanged plugins are kept as they are.
//
// A file that fails (cannot be read or compiled, pin mismatch, a claim that
// conflicts with another plugin) leaves the previous version serving; the
// failure is logged, counted by the [Observer] and shown by [Registry.Status].
// Every swap emits an [Event] naming the lists that changed.
//
// This follows design.md ("host/registry") and the reload steps of
// wasm-engine.md §8: compile in the background, swap, drain, close.
package registry
