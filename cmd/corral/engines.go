package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/plugin"
)

// checkEngines refuses a configuration that names an engine this binary
// was built without (wasmtime needs -tags wasmtime), naming the key.
func checkEngines(cfg *config.Config) error {
	if err := plugin.CheckEngine(cfg.Plugins.Engine); err != nil {
		return fmt.Errorf("plugins.engine: %w", err)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Plugin)) {
		if e := cfg.Plugin[name].Engine; e != "" {
			if err := plugin.CheckEngine(e); err != nil {
				return fmt.Errorf("plugin.%s.engine: %w", name, err)
			}
		}
	}
	return nil
}
