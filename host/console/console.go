package console

import (
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/catalog"
	"github.com/corral-mcp/corral/host/config"
	"github.com/corral-mcp/corral/host/metrics"
	"github.com/corral-mcp/corral/host/registry"
)

// Prefix is the path the console is served under.
const Prefix = "/console/"

// Registry is what the console reads of the plugin registry.
type Registry interface {
	Catalog() *catalog.Catalog
	Status() registry.Status
	Config() *config.Config
}

var _ Registry = (*registry.Registry)(nil)

// Options configure a Console.
type Options struct {
	// Registry is the plugin set the console shows and browses.
	Registry Registry
	// Metrics gives the call counts, latency, instances, quarantine and
	// last errors of each plugin; nil shows none.
	Metrics *metrics.Metrics
	// Principal is whom a request of the console browses as: every list,
	// read, completion and prompt goes through the policy as that
	// principal. Nil browses as the anonymous principal.
	Principal func(*http.Request) abi.Principal
	// Version is corral's version, shown in the page footer.
	Version string
	// Logger receives failures; nil discards.
	Logger *slog.Logger
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"join":  func(ss []string) string { return strings.Join(ss, ", ") },
	"since": since,
	"ms":    millis,
}).ParseFS(templateFS, "templates/*.html"))

// Console serves the operator console under Prefix. It is safe for
// concurrent use.
type Console struct {
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	rates rates
}

// New returns a Console.
func New(opts Options) *Console {
	c := &Console{opts: opts, log: opts.Logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Prefix+"{$}", c.overview)
	mux.HandleFunc("GET "+Prefix+"fragment/plugins", c.pluginsFragment)
	mux.HandleFunc("GET "+Prefix+"plugin/{name}", c.plugin)
	mux.HandleFunc("GET "+Prefix+"resources", c.resources)
	mux.HandleFunc("GET "+Prefix+"read", c.read)
	mux.HandleFunc("GET "+Prefix+"download", c.download)
	mux.HandleFunc("GET "+Prefix+"prompts", c.prompts)
	mux.HandleFunc("POST "+Prefix+"prompt", c.runPrompt)
	mux.HandleFunc("GET "+Prefix+"api/complete", c.complete)
	mux.Handle("GET "+Prefix+"static/", http.StripPrefix(Prefix+"static/", http.FileServerFS(static)))
	c.mux = mux
	return c
}

// ServeHTTP serves the console's pages, with headers that keep a page
// from loading or running anything but its own script and style.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make a form post's Origin "null", which the Host guard refuses
	h.Set("Cache-Control", "no-store")
	c.mux.ServeHTTP(w, r)
}

// principal is whom r browses as.
func (c *Console) principal(r *http.Request) abi.Principal {
	if c.opts.Principal != nil {
		if p := c.opts.Principal(r); p.ID != "" {
			return p
		}
	}
	return catalog.Anonymous()
}

// page is what every full page template receives.
type page struct {
	Title   string
	Nav     string // the nav entry to mark current
	Version string
	Browse  string // the principal the browser acts as
	Data    any
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, name, title, nav string, data any) {
	c.renderStatus(w, r, http.StatusOK, name, title, nav, data)
}

func (c *Console) renderStatus(w http.ResponseWriter, r *http.Request, status int, name, title, nav string, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	p := page{Title: title, Nav: nav, Version: c.opts.Version, Browse: c.principal(r).ID, Data: data}
	if err := pages.ExecuteTemplate(w, name, p); err != nil {
		c.log.Error("console: render", "page", name, "err", err)
	}
}

// failure renders an error page: status and one sentence safe to show.
func (c *Console) failure(w http.ResponseWriter, r *http.Request, status int, msg string) {
	c.renderStatus(w, r, status, "error.html", "Error", "", msg)
}

func since(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return time.Since(t).Round(time.Second).String() + " ago"
}

func millis(seconds float64) string {
	return (time.Duration(seconds * float64(time.Second))).Round(10 * time.Microsecond).String()
}
