// Package registry serves the plugins of one directory and keeps the
// catalog in step with it.
//
// A [Registry] watches the directory (fsnotify events, debounced, plus a
// periodic rescan as a safety net). Each added, replaced or removed *.wasm
// file is read once its size and modification time have settled, checked
// against the configuration's binding of plugin names to files
// (config.Binding; enabled), compiled off the request path through a
// [Loader] and checked again against the binding once its manifest names
// it. Every scan then settles who may serve from the set of files alone
// ([Settle]: a bound plugin beats an unbound claimant, two unbound claimants
// of one thing are both refused), instantiates the winners with their
// settings, and swaps the catalog.Set they form in atomically: requests in
// flight finish on the old Set, and plugins it no longer uses are closed
// once their calls have drained. Unchanged plugins are kept as they are.
//
// A file that fails (cannot be read or compiled, an invalid manifest)
// leaves the previous version serving; one that is refused (a binding it
// does not match, a claim conflict settled against it) serves nothing.
// Both are logged, counted by the [Observer] and shown by [Registry.Status].
// Every swap emits an [Event] naming the lists that changed.
//
// This follows design.md ("host/registry") and the reload steps of
// wasm-engine.md §8: compile in the background, swap, drain, close.
package registry
