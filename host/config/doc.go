// Package config loads corral's configuration into one immutable, validated
// [Config].
//
// Values are layered with koanf, later layers winning: built-in defaults, a
// YAML or TOML file (chosen by extension), CORRAL_* environment variables,
// then command-line flags. Relative paths in the file resolve against the
// file's directory; relative paths from the environment or flags resolve
// against the working directory. Every key is documented, with its default,
// in docs/configuration.md.
//
// A problem is reported as an [*Error] naming the key and, for YAML files,
// the line. [Watch] reloads a changed file: keys that can change at runtime
// (log level and every per-plugin setting) apply at once, keys that need a
// restart are logged and keep their running value, and a file that fails
// to load or validate leaves the running configuration in force.
package config
