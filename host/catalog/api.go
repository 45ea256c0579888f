package catalog

import (
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/keys"
)

// Options configure how a Set lists and validates.
type Options struct {
	// PageSize is the number of items per list page (default 100).
	PageSize int
	// Keys seals list cursors and requestState (input_required). Replicas
	// behind one load balancer share its secret through config; nil uses
	// one ring with a random secret for the whole process, so a plugin
	// reload (a new Set) keeps tokens in flight valid.
	Keys *keys.Ring
	// MaxContentBytes caps the total size of one read's contents (default 8 MiB).
	MaxContentBytes int
	// ReadTTL is the default ttlMs hint for resources/read (default 0).
	ReadTTL time.Duration
	// ListTTL is the ttlMs hint for list results (default 0).
	ListTTL time.Duration
	// Authenticated says that requests carry real principals, so answers
	// a provider computes per principal are private (cacheScope).
	Authenticated bool
	// Policy, when set, decides what each principal sees (see Policy);
	// nil shows everything to everyone.
	Policy Policy
	// StateTTL is how long a requestState stays valid (DefaultStateTTL).
	StateTTL time.Duration
	// Now is the clock for state expiry; nil is time.Now.
	Now func() time.Time

	// ListBudget bounds each provider's share of one list request: a
	// provider that has not answered its page within it is skipped
	// (DefaultListBudget).
	ListBudget time.Duration
	// Pages keeps each provider's last good page per principal, served
	// while the provider fails. Share one PageCache between the Sets of a
	// registry; nil keeps no pages (a failing page is left out).
	Pages *PageCache
	// Logger receives a line for every provider a list skipped; nil
	// discards them.
	Logger *slog.Logger
	// ListSkipped, when set, is told of every provider a list skipped: why
	// (a Skip* reason) and whether its last good page was served instead.
	ListSkipped func(plugin, reason string, cached bool)
}

// DefaultListBudget is Options.ListBudget's default.
const DefaultListBudget = 500 * time.Millisecond

// ListKind names one of the four merged lists.
type ListKind int

// The merged lists.
const (
	ListResources ListKind = iota + 1
	ListTemplates
	ListPrompts
	ListTools
)

// String returns the list's MCP result field name ("resources", …).
func (k ListKind) String() string {
	switch k {
	case ListResources:
		return "resources"
	case ListTemplates:
		return "resourceTemplates"
	case ListPrompts:
		return "prompts"
	case ListTools:
		return "tools"
	}
	return "unknown"
}

// Page is one page of a merged list.
type Page struct {
	Items      []json.RawMessage // MCP objects, validated
	NextCursor *string           // nil at the end of the list
	// Private is true when the page depends on who asked (cacheScope).
	Private bool
	TTL     time.Duration
	// Skipped lists the providers whose page failed, for the operator
	// (`corral plugin check`); clients never see it.
	Skipped []Skip
}

// Skip is a provider whose dynamic page a list could not use.
type Skip struct {
	Plugin string
	Reason string // SkipFailed, SkipError, SkipDenied, SkipInvalid or SkipAsleep
	Cached bool   // its last good page was served in its place
	Err    error  // the cause, for logs; never shown to clients
}

// Reasons a list skips a provider's page (Skip.Reason, and the reason
// label of corral_list_skipped_total).
const (
	// SkipFailed: the call failed (a trap, its deadline or the list
	// budget, quarantine); the plugin counted it.
	SkipFailed = "failed"
	// SkipError: the provider declared an error; it counts toward
	// quarantine, as a list has no declared failure a client could use.
	SkipError = "error"
	// SkipDenied: the provider declared an error after a host function
	// refused it a capability the operator did not grant; not counted.
	SkipDenied = "denied"
	// SkipInvalid: the Set refused the page (a URI outside the provider's
	// claims, more items than asked, …); counted as rejected output.
	SkipInvalid = "invalid"
	// SkipAsleep: the provider is asleep (ErrAsleep); its last good page
	// was served and it was woken up to refresh it. Not a failure, and
	// not logged.
	SkipAsleep = "asleep"
)

// ReadResult is the validated answer to resources/read.
type ReadResult struct {
	Contents []json.RawMessage // TextResourceContents / BlobResourceContents
	Private  bool
	TTL      time.Duration
	Plugin   string
}

// Catalog holds the current Set. The zero value holds no Set; use New.
type Catalog struct {
	cur atomic.Pointer[Set]
}

// New returns a Catalog serving s.
func New(s *Set) *Catalog {
	c := &Catalog{}
	c.cur.Store(s)
	return c
}

// Current returns the Set to serve one request with. Load it once per
// request so a concurrent swap cannot split the request across two Sets.
func (c *Catalog) Current() *Set { return c.cur.Load() }

// Swap installs s and returns the previous Set, which the caller drains
// and closes once its in-flight requests finish.
func (c *Catalog) Swap(s *Set) *Set { return c.cur.Swap(s) }

// anonymous is the principal of a request with no credentials.
var anonymous = abi.Principal{ID: "anonymous"}

// Anonymous returns the principal used when a transport has no
// authentication.
func Anonymous() abi.Principal { return anonymous }
