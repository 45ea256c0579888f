package config

import "time"

// Tasks configures the tasks extension (io.modelcontextprotocol/tasks):
// tool calls that run in the background and are polled.
type Tasks struct {
	// Deadline bounds one task from creation to result, input waits
	// included; Keep is how long its result stays readable after that.
	Deadline time.Duration `koanf:"deadline"`
	Keep     time.Duration `koanf:"keep"`
	// PollInterval is the pollIntervalMs suggested to clients.
	PollInterval time.Duration `koanf:"pollInterval"`
	// MaxPerPrincipal and MaxPerPlugin bound unfinished tasks.
	MaxPerPrincipal int `koanf:"maxPerPrincipal"`
	MaxPerPlugin    int `koanf:"maxPerPlugin"`
}

var tasksDefaults = map[string]any{
	"tasks.deadline": "10m", "tasks.keep": "15m", "tasks.pollInterval": "500ms",
	"tasks.maxPerPrincipal": 16, "tasks.maxPerPlugin": 64,
}

func init() {
	for k := range tasksDefaults {
		schema = append(schema, k)
	}
}

// validateTasks checks the tasks settings.
func validateTasks(cfg *Config, bad func(key, format string, args ...any)) {
	t := cfg.Tasks
	if t.Deadline < time.Second || t.Deadline > 24*time.Hour {
		bad("tasks.deadline", "must be between 1s and 24h, got %v", t.Deadline)
	}
	if t.Keep < time.Second || t.Keep > 24*time.Hour {
		bad("tasks.keep", "must be between 1s and 24h, got %v", t.Keep)
	}
	if t.PollInterval < 10*time.Millisecond || t.PollInterval > time.Minute {
		bad("tasks.pollInterval", "must be between 10ms and 1m, got %v", t.PollInterval)
	}
	if t.MaxPerPrincipal < 1 || t.MaxPerPrincipal > 1<<16 {
		bad("tasks.maxPerPrincipal", "must be between 1 and 65536, got %d", t.MaxPerPrincipal)
	}
	if t.MaxPerPlugin < 1 || t.MaxPerPlugin > 1<<20 {
		bad("tasks.maxPerPlugin", "must be between 1 and 1048576, got %d", t.MaxPerPlugin)
	}
}
