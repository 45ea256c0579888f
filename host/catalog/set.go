package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/corral-mcp/corral/abi"
	"github.com/corral-mcp/corral/host/keys"
	"github.com/yosida95/uritemplate/v3"
)

// Defaults for Options.
const (
	DefaultPageSize        = 100
	DefaultMaxContentBytes = 8 << 20
	maxPageSize            = 1000
)

// Set is an immutable snapshot of providers and their claims. Build it with
// NewSet; it is safe for concurrent use.
type Set struct {
	providers []*provider // sorted by name
	opts      Options
	keys      *keys.Ring
	gen       uint64
	genHex    string

	schemes   map[string]*provider  // scheme -> owner
	prompts   map[string]*promptRef // name -> prompt
	tools     map[string]*provider  // name -> owner
	templates map[string]*template  // uriTemplate -> template

	toolHeaders map[string][]ParamHeader // tool name -> x-mcp-header arguments
	taskSupport map[string]string        // tool name -> abi.TaskOptional or abi.TaskRequired
	inputFirst  map[string]bool          // tool name -> abi.Tool.InputFirst
	taskLimit   map[string]time.Duration // tool name -> abi.Tool.TaskDeadlineMs

	// Pre-encoded list items per provider, so static lists cost nothing.
	static [ListTools + 1][][]json.RawMessage
	// staticKeys[kind][provider][i] identifies static[kind][provider][i]
	// for a Policy: the URI, URI template or name.
	staticKeys [ListTools + 1][][]string
}

// provider is a Provider with its validated claims.
type provider struct {
	Provider
	index     int
	name      string
	pageName  string // name, NUL, digest: its pages in a PageCache
	manifest  *abi.Manifest
	schemes   []string // lowercased
	templates []*template
	skips     skipLog
}

type template struct {
	owner    *provider
	raw      string
	tmpl     *uritemplate.Template
	vars     []string
	complete []string
}

type promptRef struct {
	owner  *provider
	prompt *abi.Prompt
}

var (
	pluginName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	// toolName follows MCP's SHOULD for tool names; prompts use the same.
	toolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
)

// NewSet validates every provider's manifest and claims and builds a Set.
// Two providers claiming the same name, scheme, prompt or tool is an error
// naming both, so a newcomer that conflicts never replaces a working Set.
func NewSet(providers []Provider, opts Options) (*Set, error) {
	return newSet(providers, opts, true)
}

// Check validates one provider's manifest and claims on their own, as
// NewSet does (pre-encoding its list items, which can fail too), without
// the Set's generation, for a loader to refuse a plugin before it joins
// the others.
func Check(p Provider) error {
	_, err := newSet([]Provider{p}, Options{}, false)
	return err
}

// newSet is NewSet; withGen computes the Set's generation.
func newSet(providers []Provider, opts Options, withGen bool) (*Set, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	opts.PageSize = min(opts.PageSize, maxPageSize)
	if opts.MaxContentBytes <= 0 {
		opts.MaxContentBytes = DefaultMaxContentBytes
	}
	if opts.ListBudget <= 0 {
		opts.ListBudget = DefaultListBudget
	}

	s := &Set{
		opts:      opts,
		keys:      opts.Keys,
		schemes:   map[string]*provider{},
		prompts:   map[string]*promptRef{},
		tools:     map[string]*provider{},
		templates: map[string]*template{},

		toolHeaders: map[string][]ParamHeader{},
		taskSupport: map[string]string{},
		inputFirst:  map[string]bool{},
		taskLimit:   map[string]time.Duration{},
	}
	if s.keys == nil {
		s.keys = processKeys()
	}

	ps := make([]*provider, 0, len(providers))
	names := map[string]bool{}
	for _, p := range providers {
		m := p.Manifest()
		if m == nil {
			return nil, fmt.Errorf("catalog: a provider has no manifest")
		}
		if !pluginName.MatchString(m.Name) {
			return nil, fmt.Errorf("catalog: plugin name %q is not [a-z0-9][a-z0-9_-]{0,63}", m.Name)
		}
		if names[m.Name] {
			return nil, &ConflictError{Claim: "name", Value: m.Name, Plugins: [2]string{m.Name, m.Name}}
		}
		names[m.Name] = true
		ps = append(ps, &provider{Provider: p, name: m.Name, pageName: m.Name + "\x00" + p.Digest(), manifest: m})
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	s.providers = ps

	h := sha256.New()
	for i, p := range ps {
		p.index = i
		if err := s.claim(p); err != nil {
			if _, ok := err.(*ConflictError); ok {
				return nil, err
			}
			return nil, fmt.Errorf("catalog: plugin %s: %w", p.name, err)
		}
		if withGen {
			hashManifest(h, p.manifest)
			h.Write([]byte(p.Digest()))
			h.Write([]byte{0})
		}
	}
	sum := h.Sum(nil)
	s.gen = binary.BigEndian.Uint64(sum)
	s.genHex = hex.EncodeToString(sum[:8])
	if err := s.encodeStatic(); err != nil {
		return nil, err
	}
	return s, nil
}

// claim registers p's schemes, templates, static resources, prompts and
// tools, refusing anything another provider already holds.
func (s *Set) claim(p *provider) error {
	m := p.manifest
	if m.ABI != abi.Major {
		return fmt.Errorf("ABI major %d, this host speaks %d", m.ABI, abi.Major)
	}
	for _, sc := range m.Schemes {
		if !validScheme(sc) {
			return fmt.Errorf("scheme %q is not an RFC 3986 scheme", sc)
		}
		sc = strings.ToLower(sc)
		if other, ok := s.schemes[sc]; ok {
			if other == p {
				return fmt.Errorf("scheme %q claimed twice", sc)
			}
			return &ConflictError{Claim: "scheme", Value: sc, Plugins: [2]string{other.name, p.name}}
		}
		s.schemes[sc] = p
		p.schemes = append(p.schemes, sc)
	}
	for i := range m.Resources {
		r := &m.Resources[i]
		if err := p.checkOwnURI(r.URI); err != nil {
			return fmt.Errorf("static resource: %w", err)
		}
		if r.Name == "" {
			return fmt.Errorf("static resource %q has no name", r.URI)
		}
		if err := checkDeclared(r.Annotations, r.Icons); err != nil {
			return fmt.Errorf("static resource %q: %w", r.URI, err)
		}
	}
	for i := range m.Templates {
		t := &m.Templates[i]
		if t.Name == "" {
			return fmt.Errorf("template %q has no name", t.URITemplate)
		}
		if err := checkDeclared(t.Annotations, t.Icons); err != nil {
			return fmt.Errorf("template %q: %w", t.URITemplate, err)
		}
		tmpl, err := uritemplate.New(t.URITemplate)
		if err != nil {
			return fmt.Errorf("template %q: %w", t.URITemplate, err)
		}
		colon := strings.IndexByte(t.URITemplate, ':')
		if colon <= 0 || !slices.Contains(p.schemes, strings.ToLower(t.URITemplate[:colon])) {
			return fmt.Errorf("template %q does not start with one of the plugin's schemes %v", t.URITemplate, p.schemes)
		}
		if other, ok := s.templates[t.URITemplate]; ok {
			return &ConflictError{Claim: "template", Value: t.URITemplate, Plugins: [2]string{other.owner.name, p.name}}
		}
		vars := tmpl.Varnames()
		for _, c := range t.Complete {
			if !slices.Contains(vars, c) {
				return fmt.Errorf("template %q: completable variable %q is not in the template", t.URITemplate, c)
			}
		}
		tt := &template{owner: p, raw: t.URITemplate, tmpl: tmpl, vars: vars, complete: t.Complete}
		s.templates[t.URITemplate] = tt
		p.templates = append(p.templates, tt)
	}
	for i := range m.Prompts {
		pr := &m.Prompts[i]
		if !toolName.MatchString(pr.Name) {
			return fmt.Errorf("prompt name %q is not [A-Za-z0-9_.-]{1,128}", pr.Name)
		}
		if other, ok := s.prompts[pr.Name]; ok {
			return &ConflictError{Claim: "prompt", Value: pr.Name, Plugins: [2]string{other.owner.name, p.name}}
		}
		if err := checkDeclared(nil, pr.Icons); err != nil {
			return fmt.Errorf("prompt %q: %w", pr.Name, err)
		}
		for _, c := range pr.Complete {
			if !slices.ContainsFunc(pr.Arguments, func(a abi.PromptArgument) bool { return a.Name == c }) {
				return fmt.Errorf("prompt %q: completable argument %q is not an argument", pr.Name, c)
			}
		}
		s.prompts[pr.Name] = &promptRef{owner: p, prompt: pr}
	}
	for i := range m.Tools {
		t := &m.Tools[i]
		if !toolName.MatchString(t.Name) {
			return fmt.Errorf("tool name %q is not [A-Za-z0-9_.-]{1,128}", t.Name)
		}
		if other, ok := s.tools[t.Name]; ok {
			return &ConflictError{Claim: "tool", Value: t.Name, Plugins: [2]string{other.name, p.name}}
		}
		if !isObject(t.InputSchema) || len(t.InputSchema) == 0 {
			return fmt.Errorf("tool %q: inputSchema must be a JSON object", t.Name)
		}
		if err := checkDeclared(nil, t.Icons); err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		for _, raw := range []json.RawMessage{t.OutputSchema, t.Annotations} {
			if len(raw) > 0 && !isObject(raw) {
				return fmt.Errorf("tool %q: outputSchema and annotations must be JSON objects", t.Name)
			}
		}
		hs, err := paramHeaders(t.InputSchema)
		if err != nil {
			return fmt.Errorf("tool %q: %w", t.Name, err)
		}
		if hs != nil {
			s.toolHeaders[t.Name] = hs
		}
		if t.Execution != nil {
			switch t.Execution.TaskSupport {
			case "", abi.TaskForbidden:
			case abi.TaskOptional, abi.TaskRequired:
				s.taskSupport[t.Name] = t.Execution.TaskSupport
				if t.InputFirst {
					s.inputFirst[t.Name] = true
				}
			default:
				return fmt.Errorf("tool %q: execution.taskSupport %q is not forbidden, optional or required", t.Name, t.Execution.TaskSupport)
			}
		}
		switch d := t.TaskDeadlineMs; {
		case d < 0 || d > maxTaskDeadlineMs:
			return fmt.Errorf("tool %q: taskDeadlineMs %d is not between 1 and %d", t.Name, d, int64(maxTaskDeadlineMs))
		case d > 0 && s.taskSupport[t.Name] == "":
			return fmt.Errorf("tool %q: taskDeadlineMs needs execution.taskSupport optional or required", t.Name)
		case d > 0:
			s.taskLimit[t.Name] = time.Duration(d) * time.Millisecond
		}
		s.tools[t.Name] = p
	}
	return nil
}

// encodeStatic pre-encodes the manifest-declared list items.
func (s *Set) encodeStatic() error {
	for k := ListResources; k <= ListTools; k++ {
		s.static[k] = make([][]json.RawMessage, len(s.providers))
		s.staticKeys[k] = make([][]string, len(s.providers))
	}
	var (
		mem     arena
		scratch []byte
	)
	for i, p := range s.providers {
		m := p.manifest
		s.static[ListResources][i] = make([]json.RawMessage, 0, len(m.Resources))
		s.staticKeys[ListResources][i] = make([]string, 0, len(m.Resources))
		for j := range m.Resources {
			r := &m.Resources[j]
			b, err := appendStaticResource(scratch[:0], r)
			if err != nil {
				return fmt.Errorf("catalog: plugin %s: %w", p.name, err)
			}
			scratch = b
			s.static[ListResources][i] = append(s.static[ListResources][i], mem.copy(b))
			s.staticKeys[ListResources][i] = append(s.staticKeys[ListResources][i], r.URI)
		}
		for _, t := range m.Templates {
			t.Complete = nil
			b, err := encode(t)
			if err != nil {
				return fmt.Errorf("catalog: plugin %s: %w", p.name, err)
			}
			s.static[ListTemplates][i] = append(s.static[ListTemplates][i], b)
			s.staticKeys[ListTemplates][i] = append(s.staticKeys[ListTemplates][i], t.URITemplate)
		}
		for _, pr := range m.Prompts {
			pr.Complete = nil
			b, err := encode(pr)
			if err != nil {
				return fmt.Errorf("catalog: plugin %s: %w", p.name, err)
			}
			s.static[ListPrompts][i] = append(s.static[ListPrompts][i], b)
			s.staticKeys[ListPrompts][i] = append(s.staticKeys[ListPrompts][i], pr.Name)
		}
		for _, t := range m.Tools {
			t.InputFirst, t.TaskDeadlineMs = false, 0 // the host's business, not the client's
			b, err := encode(t)
			if err != nil {
				return fmt.Errorf("catalog: plugin %s: %w", p.name, err)
			}
			s.static[ListTools][i] = append(s.static[ListTools][i], b)
			s.staticKeys[ListTools][i] = append(s.staticKeys[ListTools][i], t.Name)
		}
	}
	return nil
}

// Generation returns a content-derived id of the Set: the same providers
// (same manifests and digests) give the same id in every process.
func (s *Set) Generation() string { return s.genHex }

// Providers returns the Set's providers in list order.
func (s *Set) Providers() []Provider {
	out := make([]Provider, len(s.providers))
	for i, p := range s.providers {
		out[i] = p.Provider
	}
	return out
}

// OwnerOf returns the name of the plugin that owns uri's scheme.
func (s *Set) OwnerOf(uri string) (string, bool) {
	p, ok := s.schemes[schemeOf(uri)]
	if !ok {
		return "", false
	}
	return p.name, true
}

func (s *Set) listTTL() time.Duration { return s.opts.ListTTL }

// ConflictError reports two plugins claiming the same thing. NewSet
// returns it as is, so a registry can tell which plugin to leave out.
type ConflictError struct {
	Claim   string    // "name", "scheme", "template", "prompt" or "tool"
	Value   string    // what both claim
	Plugins [2]string // the two plugins, in list order
}

// Error implements error.
func (e *ConflictError) Error() string {
	if e.Claim == "name" {
		return fmt.Sprintf("catalog: two plugins are named %q", e.Value)
	}
	return fmt.Sprintf("catalog: %s %q is claimed by both plugin %s and plugin %s", e.Claim, e.Value, e.Plugins[0], e.Plugins[1])
}
