package corral

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/corral-mcp/corral/abi"
)

// ReadFunc reads a resource. It returns the contents (build them with
// TextContents and BlobContents) or an error; NotFound makes the host answer
// "resource not found" for the URI.
type ReadFunc func(req *abi.ReadResourceRequest) (*abi.ReadResourceResult, error)

// ListFunc returns one page of dynamic resources: at most req.Limit of them,
// starting after req.Cursor ("" for the first page), and the cursor of the
// next page ("" after the last one). Cursors are the plugin's own; the host
// wraps them in its own tamper-evident cursor.
type ListFunc func(req *abi.ListResourcesRequest) (resources []abi.Resource, next string, err error)

// PromptFunc renders a prompt. Required arguments have been checked by the
// SDK (and by the host) before it is called.
type PromptFunc func(req *abi.GetPromptRequest) (*abi.GetPromptResult, error)

// ToolFunc runs a tool. An error it returns becomes a tool result with
// isError set and the error's message as text, as MCP asks for tool
// failures; protocol errors are reserved for unknown tools and malformed
// requests.
type ToolFunc func(req *abi.CallToolRequest) (*abi.CallToolResult, error)

// CompleteFunc suggests values for req.Argument.Name given its partial
// req.Argument.Value and the other arguments already chosen
// (req.Arguments). The SDK keeps the first 100 and sets total and hasMore.
type CompleteFunc func(req *abi.CompleteRequest) ([]string, error)

// Plugin collects what a plugin serves. Build it with New and the
// registration methods, then pass it to Serve. Registration mistakes
// (duplicates, names outside the plugin's schemes, nil handlers) are
// collected and reported by Validate, and by every call once served.
type Plugin struct {
	m         abi.Manifest
	resources map[string]ReadFunc
	templates map[string]*templateEntry
	prompts   map[string]*promptEntry
	tools     map[string]*toolEntry
	reader    ReadFunc
	lister    ListFunc
	errs      []error

	sealed   bool
	sealErr  error
	manifest []byte // encoded manifest, built once by seal
	enc      encoder
}

type templateEntry struct {
	read     ReadFunc
	complete CompleteFunc
	canFill  []string
}

type promptEntry struct {
	get      PromptFunc
	complete CompleteFunc
	canFill  []string
	required []string
}

type toolEntry struct {
	call     ToolFunc
	required []string
}

// New starts a plugin with its name ([a-z0-9][a-z0-9_-]{0,63}) and version.
func New(name, version string) *Plugin {
	return &Plugin{
		m:         abi.Manifest{Name: name, Version: version, ABI: abi.Major},
		resources: map[string]ReadFunc{},
		templates: map[string]*templateEntry{},
		prompts:   map[string]*promptEntry{},
		tools:     map[string]*toolEntry{},
	}
}

// Title sets the plugin's human-readable title.
func (p *Plugin) Title(title string) { p.m.Title = title }

// Description sets the plugin's description.
func (p *Plugin) Description(desc string) { p.m.Description = desc }

// Scheme claims URI schemes for the plugin; every resource, template and
// content URI it serves must use one of them.
func (p *Plugin) Scheme(schemes ...string) {
	for _, s := range schemes {
		s = strings.ToLower(s)
		if slices.Contains(p.m.Schemes, s) {
			p.fail("scheme %q claimed twice", s)
			continue
		}
		p.m.Schemes = append(p.m.Schemes, s)
	}
}

// Request asks for host capabilities (abi.Cap* names). Only those the
// operator also grants work; the others fail with ErrDenied.
func (p *Plugin) Request(caps ...string) {
	for _, c := range caps {
		if !slices.Contains(abi.Capabilities[:], c) {
			p.fail("unknown capability %q", c)
			continue
		}
		if !slices.Contains(p.m.Capabilities, c) {
			p.m.Capabilities = append(p.m.Capabilities, c)
		}
	}
}

// Require asks for host capabilities the plugin cannot work without: it
// requests them (as Request does) and marks them required in the manifest
// (ABI 1.2). The host names every requested capability the operator did
// not grant when the plugin loads, and `corral plugin check` fails when a
// required one is missing; capabilities asked for with Request alone are
// optional.
func (p *Plugin) Require(caps ...string) {
	p.Request(caps...)
	for _, c := range caps {
		if slices.Contains(p.m.Capabilities, c) && !slices.Contains(p.m.RequiredCapabilities, c) {
			p.m.RequiredCapabilities = append(p.m.RequiredCapabilities, c)
		}
	}
}

// Resource declares a static resource, listed by the host without calling
// the plugin, and the handler that reads it.
func (p *Plugin) Resource(r abi.Resource, read ReadFunc) {
	switch {
	case r.URI == "" || r.Name == "":
		p.fail("resource %q needs a uri and a name", r.URI)
		return
	case read == nil:
		p.fail("resource %q has no read handler", r.URI)
		return
	case p.resources[r.URI] != nil:
		p.fail("resource %q declared twice", r.URI)
		return
	}
	p.resources[r.URI] = read
	p.m.Resources = append(p.m.Resources, r)
}

// Template declares an RFC 6570 resource template, the handler that reads
// URIs matching it and, optionally, a completion handler for its
// variables. When complete is set and t.Complete is empty, every variable
// of the template is declared completable.
func (p *Plugin) Template(t abi.Template, read ReadFunc, complete CompleteFunc) {
	switch {
	case t.URITemplate == "" || t.Name == "":
		p.fail("template %q needs a uriTemplate and a name", t.URITemplate)
		return
	case read == nil:
		p.fail("template %q has no read handler", t.URITemplate)
		return
	case p.templates[t.URITemplate] != nil:
		p.fail("template %q declared twice", t.URITemplate)
		return
	}
	vars := TemplateVariables(t.URITemplate)
	if complete != nil && len(t.Complete) == 0 {
		t.Complete = vars
	}
	for _, c := range t.Complete {
		if !slices.Contains(vars, c) {
			p.fail("template %q: completable variable %q is not in the template", t.URITemplate, c)
		}
	}
	if complete == nil && len(t.Complete) > 0 {
		p.fail("template %q declares completable variables but has no completion handler", t.URITemplate)
	}
	p.templates[t.URITemplate] = &templateEntry{read: read, complete: complete, canFill: t.Complete}
	p.m.Templates = append(p.m.Templates, t)
}

// Prompt declares a prompt, the handler that renders it and, optionally, a
// completion handler for its arguments. When complete is set and
// pr.Complete is empty, every argument is declared completable.
func (p *Plugin) Prompt(pr abi.Prompt, get PromptFunc, complete CompleteFunc) {
	switch {
	case pr.Name == "":
		p.fail("a prompt needs a name")
		return
	case get == nil:
		p.fail("prompt %q has no handler", pr.Name)
		return
	case p.prompts[pr.Name] != nil:
		p.fail("prompt %q declared twice", pr.Name)
		return
	}
	e := &promptEntry{get: get, complete: complete}
	var names []string
	for _, a := range pr.Arguments {
		if a.Name == "" || slices.Contains(names, a.Name) {
			p.fail("prompt %q: argument names must be non-empty and unique", pr.Name)
		}
		names = append(names, a.Name)
		if a.Required {
			e.required = append(e.required, a.Name)
		}
	}
	if complete != nil && len(pr.Complete) == 0 {
		pr.Complete = names
	}
	for _, c := range pr.Complete {
		if !slices.Contains(names, c) {
			p.fail("prompt %q: completable argument %q is not an argument", pr.Name, c)
		}
	}
	if complete == nil && len(pr.Complete) > 0 {
		p.fail("prompt %q declares completable arguments but has no completion handler", pr.Name)
	}
	e.canFill = pr.Complete
	p.prompts[pr.Name] = e
	p.m.Prompts = append(p.m.Prompts, pr)
}

var toolName = regexp.MustCompile(`^[A-Za-z0-9_./-]{1,64}$`)

// Tool declares a tool and its handler. An empty InputSchema becomes
// {"type":"object"}. The schema's top-level "required" list is enforced by
// the SDK before call runs.
func (p *Plugin) Tool(t abi.Tool, call ToolFunc) {
	switch {
	case !toolName.MatchString(t.Name):
		p.fail("tool name %q must match %s", t.Name, toolName)
		return
	case call == nil:
		p.fail("tool %q has no handler", t.Name)
		return
	case p.tools[t.Name] != nil:
		p.fail("tool %q declared twice", t.Name)
		return
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	var schema struct {
		Type     string   `json:"type"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
		p.fail("tool %q: input schema: %v", t.Name, err)
		return
	}
	if schema.Type != "object" {
		p.fail("tool %q: input schema must have type \"object\"", t.Name)
		return
	}
	if err := taskFields(t); err != nil {
		p.fail("tool %q: %v", t.Name, err)
		return
	}
	p.tools[t.Name] = &toolEntry{call: call, required: schema.Required}
	p.m.Tools = append(p.m.Tools, t)
}

// Lister sets the handler listing the plugin's dynamic resources, page by
// page. Static resources declared with Resource are listed by the host and
// must not be returned again.
func (p *Plugin) Lister(list ListFunc) {
	if list == nil {
		p.fail("nil lister")
		return
	}
	p.lister = list
	p.m.ListsResources = true
}

// Reader sets the handler for URIs in the plugin's schemes that are neither
// a static resource nor matched by the host to one of the templates
// (for example dynamic resources from the Lister). Without it such URIs
// are not found.
func (p *Plugin) Reader(read ReadFunc) {
	if read == nil {
		p.fail("nil reader")
		return
	}
	p.reader = read
}

func (p *Plugin) fail(format string, args ...any) {
	p.errs = append(p.errs, fmt.Errorf(format, args...))
}

var pluginName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Validate reports every registration mistake, or nil.
// maxTaskDeadlineMs is the longest task deadline a tool may declare: a day.
const maxTaskDeadlineMs = 24 * 60 * 60 * 1000

// taskFields checks a tool's task declaration (ABI 1.3 and 1.4) as the
// host does, so that a mistake shows in the plugin's tests.
func taskFields(t abi.Tool) error {
	var support string
	if t.Execution != nil {
		support = t.Execution.TaskSupport
	}
	tasks := support == abi.TaskOptional || support == abi.TaskRequired
	switch {
	case support != "" && support != abi.TaskForbidden && !tasks:
		return fmt.Errorf("execution.taskSupport %q is not forbidden, optional or required", support)
	case t.TaskDeadlineMs < 0 || t.TaskDeadlineMs > maxTaskDeadlineMs:
		return fmt.Errorf("TaskDeadlineMs %d is not between 1 and %d", t.TaskDeadlineMs, maxTaskDeadlineMs)
	case !tasks && (t.InputFirst || t.TaskDeadlineMs > 0):
		return errors.New("InputFirst and TaskDeadlineMs need task support optional or required")
	}
	return nil
}

func (p *Plugin) Validate() error {
	errs := slices.Clone(p.errs)
	if !pluginName.MatchString(p.m.Name) {
		errs = append(errs, fmt.Errorf("plugin name %q must match %s", p.m.Name, pluginName))
	}
	if p.m.Version == "" {
		errs = append(errs, errors.New("plugin version is empty"))
	}
	inScheme := func(uri string) bool {
		colon := strings.IndexByte(uri, ':')
		return colon > 0 && slices.Contains(p.m.Schemes, strings.ToLower(uri[:colon]))
	}
	for _, r := range p.m.Resources {
		if !inScheme(r.URI) {
			errs = append(errs, fmt.Errorf("resource %q is outside the plugin's schemes %v", r.URI, p.m.Schemes))
		}
	}
	for _, t := range p.m.Templates {
		if !inScheme(t.URITemplate) {
			errs = append(errs, fmt.Errorf("template %q is outside the plugin's schemes %v", t.URITemplate, p.m.Schemes))
		}
	}
	if (p.lister != nil || p.reader != nil) && len(p.m.Schemes) == 0 {
		errs = append(errs, errors.New("a lister or reader needs a scheme"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("corral: plugin %q: %w", p.m.Name, err)
	}
	return nil
}

// Manifest returns the manifest the plugin answers to describe.
func (p *Plugin) Manifest() abi.Manifest { return p.m }

// seal validates the plugin once and caches its encoded manifest.
func (p *Plugin) seal() error {
	if p.sealed {
		return p.sealErr
	}
	p.sealed = true
	if p.sealErr = p.Validate(); p.sealErr != nil {
		return p.sealErr
	}
	b, err := json.Marshal(&p.m)
	if err != nil {
		p.sealErr = fmt.Errorf("corral: encode manifest: %w", err)
		return p.sealErr
	}
	p.manifest = b
	return nil
}

// TemplateVariables returns the variable names of an RFC 6570 URI template
// in order of appearance, without operators and modifiers.
func TemplateVariables(tmpl string) []string {
	var vars []string
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			return vars
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return vars
		}
		expr := tmpl[open+1 : open+end]
		tmpl = tmpl[open+end+1:]
		if expr != "" && strings.ContainsRune("+#./;?&", rune(expr[0])) {
			expr = expr[1:]
		}
		for v := range strings.SplitSeq(expr, ",") {
			if i := strings.IndexAny(v, ":*"); i >= 0 {
				v = v[:i]
			}
			if v != "" && !slices.Contains(vars, v) {
				vars = append(vars, v)
			}
		}
	}
}
