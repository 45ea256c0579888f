// Command issues is a corral plugin serving an issue tracker kept in a JSON
// data file under a granted root (config value "data": an absolute path or
// one relative to the first root).
//
// It serves issues as issues://{number} and as
// repo://{owner}/{repo}/issues/{number}, attachments as
// issues://{number}/attachments/{name}, the team's triage guide as
// issues://guide/triage, the triage_issue prompt and the search_issues
// tool, with completion of every template variable and prompt argument.
// An issue with "visibleTo" groups exists only for principals in one of
// them: elsewhere it answers exactly as a missing issue would, in lists,
// reads, completions, prompts and searches.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

func main() {}

func init() { corral.Serve(newPlugin()) }

const (
	guideURI         = "issues://guide/triage"
	issueTemplate    = "issues://{number}"
	attachTemplate   = "issues://{number}/attachments/{name}"
	repoTemplate     = "repo://{owner}/{repo}/issues/{number}"
	triagePrompt     = "triage_issue"
	searchTool       = "search_issues"
	markdown         = "text/markdown"
	maxSearchResults = 20
)

func newPlugin() *corral.Plugin {
	s := &server{}
	p := corral.New("issues", "1.0.0")
	p.Title("Issue tracker")
	p.Description("Issues, attachments and the triage guide of a small tracker kept in a JSON file.")
	p.Scheme("issues", "repo")
	p.Require(abi.CapFiles, abi.CapConfig) // its data file: a root and its name
	p.Request(abi.CapLog)

	p.Resource(abi.Resource{URI: guideURI, Name: "triage-guide", Title: "Triage guide",
		Description: "How the team triages new issues", MimeType: markdown,
		Annotations: corral.Annotations{Audience: []string{"user", "assistant"}, Priority: corral.Priority(0.6)}.JSON()},
		s.readGuide)
	p.Template(abi.Template{URITemplate: issueTemplate, Name: "issue", Title: "Issue by number",
		Description: "An issue rendered as Markdown, with its comments", MimeType: markdown}, s.read, s.complete)
	p.Template(abi.Template{URITemplate: attachTemplate, Name: "attachment", Title: "Issue attachment",
		Description: "A file attached to an issue"}, s.read, s.complete)
	p.Template(abi.Template{URITemplate: repoTemplate, Name: "repo-issue", Title: "Issue of a repository",
		Description: "An issue addressed by owner, repository and number", MimeType: markdown}, s.read, s.complete)
	p.Reader(s.read)
	p.Lister(s.list)

	p.Prompt(abi.Prompt{Name: triagePrompt, Title: "Triage an issue",
		Description: "Triage an issue following the team's guide: labels, priority, area and a first reply",
		Arguments: []abi.PromptArgument{
			{Name: "issue_id", Title: "Issue", Description: "Number of the issue to triage, e.g. 7", Required: true},
			{Name: "area", Title: "Area", Description: "The area you think owns the issue (optional)"},
		}}, s.triage, s.complete)

	p.Tool(abi.Tool{Name: searchTool, Title: "Search issues",
		Description: "Find issues whose title, body or labels contain every word of the query, reporting progress as it goes",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Words to look for"},` +
			`"state":{"type":"string","enum":["open","closed","all"],"description":"Which issues (default open)"}},` +
			`"required":["query"]}`),
		Annotations: json.RawMessage(`{"readOnlyHint":true,"openWorldHint":false}`)}, s.search)
	return p
}

type server struct {
	store store
}

// ref is what an issues:// or repo:// URI names.
type ref struct {
	number      int
	owner, repo string // set for repo:// URIs
	attachment  string // set for attachment URIs
}

// parseRef parses the URI forms the plugin serves. ok is false for
// anything else.
func parseRef(uri string) (r ref, ok bool) {
	var segs []string
	switch {
	case strings.HasPrefix(uri, "issues://"):
		segs = strings.Split(strings.TrimPrefix(uri, "issues://"), "/")
		switch {
		case len(segs) == 1:
		case len(segs) == 3 && segs[1] == "attachments" && validSegment(segs[2]):
			r.attachment = segs[2]
		default:
			return ref{}, false
		}
	case strings.HasPrefix(uri, "repo://"):
		segs = strings.Split(strings.TrimPrefix(uri, "repo://"), "/")
		if len(segs) != 4 || segs[2] != "issues" || !validSegment(segs[0]) || !validSegment(segs[1]) {
			return ref{}, false
		}
		r.owner, r.repo = segs[0], segs[1]
		segs = segs[3:]
	default:
		return ref{}, false
	}
	n, ok := parseNumber(segs[0])
	r.number = n
	return r, ok
}

// parseNumber accepts a canonical positive decimal, optionally after "#".
func parseNumber(s string) (int, bool) {
	s = strings.TrimPrefix(s, "#")
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || strconv.Itoa(n) != s {
		return 0, false
	}
	return n, true
}

// find returns issue n when pr may see it.
func find(t *tracker, n int, pr abi.Principal) *issue {
	i := sort.Search(len(t.Issues), func(i int) bool { return t.Issues[i].Number >= n })
	if i < len(t.Issues) && t.Issues[i].Number == n && t.Issues[i].visible(pr) {
		return t.Issues[i]
	}
	return nil
}

func notFound(uri string) error { return corral.NotFound("resource not found: " + uri) }

func (s *server) readGuide(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
	t, err := s.store.load()
	if err != nil {
		return nil, err
	}
	return corral.Contents(corral.TextContents(r.URI, markdown, t.TriageGuide)), nil
}

func (s *server) read(r *abi.ReadResourceRequest) (*abi.ReadResourceResult, error) {
	rf, ok := parseRef(r.URI)
	if !ok {
		return nil, notFound(r.URI)
	}
	t, err := s.store.load()
	if err != nil {
		return nil, err
	}
	is := find(t, rf.number, r.Principal)
	if is == nil || (rf.owner != "" && (is.Owner != rf.owner || is.Repo != rf.repo)) {
		return nil, notFound(r.URI)
	}
	if rf.attachment == "" {
		return corral.Contents(corral.TextContents(r.URI, markdown, is.markdown())), nil
	}
	a := is.attachment(rf.attachment)
	if a == nil {
		return nil, notFound(r.URI)
	}
	data, err := s.store.attachmentData(a)
	if err != nil {
		return nil, fmt.Errorf("issues: attachment %s of #%d: %w", a.Name, is.Number, err)
	}
	mime := a.MimeType
	if mime == "" {
		mime = "application/octet-stream"
	}
	if strings.HasPrefix(mime, "text/") && utf8.Valid(data) {
		return corral.Contents(corral.TextContents(r.URI, mime, string(data))), nil
	}
	return corral.Contents(corral.BlobContents(r.URI, mime, data)), nil
}

func issueURI(n int) string { return "issues://" + strconv.Itoa(n) }

func attachmentURI(n int, name string) string {
	return issueURI(n) + "/attachments/" + name
}

// markdown returns the issue rendered as Markdown, rendering it once per
// load of the data file.
func (is *issue) markdown() string {
	if is.rendered == "" {
		is.rendered = render(is)
	}
	return is.rendered
}

// render formats an issue as Markdown.
func render(is *issue) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# #%d %s\n\n", is.Number, is.Title)
	fmt.Fprintf(&b, "- Repository: %s/%s\n", is.Owner, is.Repo)
	fmt.Fprintf(&b, "- State: %s\n", orNone(is.State))
	fmt.Fprintf(&b, "- Author: %s\n", orNone(is.Author))
	fmt.Fprintf(&b, "- Labels: %s\n", orNone(strings.Join(is.Labels, ", ")))
	fmt.Fprintf(&b, "- Area: %s\n", orNone(is.Area))
	fmt.Fprintf(&b, "- Priority: %s\n", orNone(is.Priority))
	fmt.Fprintf(&b, "- Opened: %s; updated: %s\n", orNone(is.CreatedAt), orNone(is.UpdatedAt))
	if strings.TrimSpace(is.Body) != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimSpace(is.Body))
	}
	if len(is.Attachments) > 0 {
		b.WriteString("\n## Attachments\n\n")
		for _, a := range is.Attachments {
			fmt.Fprintf(&b, "- [%s](%s) (%s)\n", a.Name, attachmentURI(is.Number, a.Name), orNone(a.MimeType))
		}
	}
	if len(is.Comments) > 0 {
		fmt.Fprintf(&b, "\n## Comments (%d)\n", len(is.Comments))
		for _, c := range is.Comments {
			fmt.Fprintf(&b, "\n**%s** at %s:\n\n%s\n", orNone(c.Author), orNone(c.CreatedAt), strings.TrimSpace(c.Body))
		}
	}
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// priorities maps an issue's priority to an MCP annotation priority.
var priorities = map[string]float64{"critical": 1, "high": 0.8, "medium": 0.5, "low": 0.2}

func issueAnnotations(is *issue) corral.Annotations {
	a := corral.Annotations{Audience: []string{"user", "assistant"}, LastModified: is.UpdatedAt}
	if p, ok := priorities[is.Priority]; ok {
		a.Priority = corral.Priority(p)
	}
	return a
}

// entry is one listed resource: an issue (att < 0) or one of its
// attachments.
type entry struct {
	is  *issue
	att int
}

func (e entry) resource() abi.Resource {
	if e.att < 0 {
		return abi.Resource{URI: issueURI(e.is.Number), Name: fmt.Sprintf("%s/%s#%d", e.is.Owner, e.is.Repo, e.is.Number),
			Title: e.is.Title, Description: fmt.Sprintf("%s issue in %s/%s", orNone(e.is.State), e.is.Owner, e.is.Repo),
			MimeType: markdown, Annotations: issueAnnotations(e.is).JSON()}
	}
	a := e.is.Attachments[e.att]
	r := abi.Resource{URI: attachmentURI(e.is.Number, a.Name), Name: a.Name,
		Title:       fmt.Sprintf("%s (attached to #%d)", a.Name, e.is.Number),
		MimeType:    a.MimeType,
		Annotations: corral.Annotations{Audience: []string{"user"}, Priority: corral.Priority(0.3), LastModified: e.is.UpdatedAt}.JSON()}
	if a.File == "" {
		size := int64(len(a.Data))
		r.Size = &size
	}
	return r
}

// The list cursor is "<number>.<k>" for the last entry listed, where k is 0
// for the issue and i+1 for its attachment i.
func listCursor(e entry) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d.%d", e.is.Number, e.att+1))
}

func parseListCursor(c string) (number, k int, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		a, b, ok := strings.Cut(string(raw), ".")
		number, err1 := strconv.Atoi(a)
		k, err2 := strconv.Atoi(b)
		if ok && err1 == nil && err2 == nil && number > 0 && k >= 0 {
			return number, k, nil
		}
	}
	return 0, 0, corral.InvalidParams("malformed cursor")
}

func (s *server) list(r *abi.ListResourcesRequest) ([]abi.Resource, string, error) {
	t, err := s.store.load()
	if err != nil {
		return nil, "", err
	}
	afterN, afterK := 0, 0
	if r.Cursor != "" {
		if afterN, afterK, err = parseListCursor(r.Cursor); err != nil {
			return nil, "", err
		}
	}
	// Issues are sorted by number: start at the cursor's issue.
	start := sort.Search(len(t.Issues), func(i int) bool { return t.Issues[i].Number >= afterN })
	var out []abi.Resource
	var last entry
	for _, is := range t.Issues[start:] {
		if !is.visible(r.Principal) {
			continue
		}
		for k := 0; k <= len(is.Attachments); k++ {
			if is.Number == afterN && k <= afterK {
				continue
			}
			if len(out) == r.Limit {
				return out, listCursor(last), nil
			}
			last = entry{is: is, att: k - 1}
			out = append(out, last.resource())
		}
	}
	return out, "", nil
}

func (s *server) triage(r *abi.GetPromptRequest) (*abi.GetPromptResult, error) {
	t, err := s.store.load()
	if err != nil {
		return nil, err
	}
	id := r.Arguments["issue_id"]
	n, ok := parseNumber(strings.TrimSpace(id))
	if !ok {
		return nil, corral.InvalidParams(fmt.Sprintf("issue_id %q is not an issue number", id))
	}
	is := find(t, n, r.Principal)
	if is == nil {
		return nil, corral.InvalidParams(fmt.Sprintf("issue %d not found", n))
	}
	area := strings.TrimSpace(r.Arguments["area"])
	if area != "" && !slices.Contains(t.Areas, area) {
		return nil, corral.InvalidParams(fmt.Sprintf("unknown area %q; known areas: %s", area, strings.Join(t.Areas, ", ")))
	}
	ask := fmt.Sprintf("Triage issue #%d (%q in %s/%s) following the triage guide above. "+
		"Propose labels, a priority (low, medium, high or critical), the owning area (one of: %s) "+
		"and a short first reply to the reporter.", is.Number, is.Title, is.Owner, is.Repo, strings.Join(t.Areas, ", "))
	if area != "" {
		ask += fmt.Sprintf(" The requester believes the area is %q: confirm or correct it.", area)
	}
	issueBlock := corral.WithAnnotations(
		corral.EmbeddedResource(corral.TextContents(issueURI(is.Number), markdown, is.markdown())),
		corral.Annotations{Audience: []string{"assistant"}, Priority: corral.Priority(1), LastModified: is.UpdatedAt})
	guideBlock := corral.WithAnnotations(
		corral.EmbeddedResource(corral.TextContents(guideURI, markdown, t.TriageGuide)),
		corral.Annotations{Audience: []string{"assistant"}, Priority: corral.Priority(0.7)})
	return corral.Messages(fmt.Sprintf("Triage issue #%d: %s", is.Number, is.Title),
		corral.UserMessage(issueBlock),
		corral.UserMessage(guideBlock),
		corral.UserMessage(corral.Text(ask)),
	), nil
}

// complete serves every completion: the template variables owner, repo,
// number and name, and the prompt arguments issue_id and area. Candidates
// come from the issues the principal may see, narrowed by the arguments
// already chosen.
func (s *server) complete(r *abi.CompleteRequest) ([]string, error) {
	t, err := s.store.load()
	if err != nil {
		return nil, err
	}
	ctx := r.Arguments
	owner, repo := ctx["owner"], ctx["repo"]
	prefix := r.Argument.Value
	var out []string
	add := func(v string) {
		if strings.HasPrefix(strings.ToLower(v), strings.ToLower(prefix)) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	switch r.Argument.Name {
	case "owner":
		for _, is := range t.Issues {
			if is.visible(r.Principal) {
				add(is.Owner)
			}
		}
		sort.Strings(out)
	case "repo":
		for _, is := range t.Issues {
			if is.visible(r.Principal) && (owner == "" || is.Owner == owner) {
				add(is.Repo)
			}
		}
		sort.Strings(out)
	case "number", "issue_id":
		prefix = strings.TrimPrefix(prefix, "#")
		for _, is := range t.Issues {
			if !is.visible(r.Principal) || (owner != "" && is.Owner != owner) || (repo != "" && is.Repo != repo) {
				continue
			}
			if r.Ref.URI == attachTemplate && len(is.Attachments) == 0 {
				continue
			}
			add(strconv.Itoa(is.Number))
		}
	case "name":
		n, ok := parseNumber(ctx["number"])
		if !ok {
			return nil, nil
		}
		if is := find(t, n, r.Principal); is != nil {
			for _, a := range is.Attachments {
				add(a.Name)
			}
		}
	case "area":
		for _, a := range t.Areas {
			add(a)
		}
	}
	return out, nil
}

// search answers search_issues with a summary and a link per match.
func (s *server) search(r *abi.CallToolRequest) (*abi.CallToolResult, error) {
	var args struct {
		Query string `json:"query"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(r.Arguments, &args); err != nil {
		return corral.ToolError("arguments: " + err.Error()), nil
	}
	switch args.State {
	case "":
		args.State = "open"
	case "open", "closed", "all":
	default:
		return corral.ToolError(fmt.Sprintf("state must be open, closed or all, not %q", args.State)), nil
	}
	words := strings.Fields(strings.ToLower(args.Query))
	if len(words) == 0 {
		return corral.ToolError("query is empty"), nil
	}
	t, err := s.store.load()
	if err != nil {
		return nil, err
	}
	// Only the issues the caller may see and asked for are searched and
	// counted: a total that included private issues would tell a guest
	// they exist.
	var scope []*issue
	for _, is := range t.Issues {
		if is.visible(r.Principal) && (args.State == "all" || is.State == args.State) {
			scope = append(scope, is)
		}
	}
	var links []json.RawMessage
	var lines []string
	for i, is := range scope {
		// One progress report per issue searched (dropped by the host when
		// the client asked for none): a client shows a long search advance.
		msg := fmt.Sprintf("searched %d of %d issues", i+1, len(scope))
		if err := corral.Progress(float64(i+1), float64(len(scope)), msg); err != nil {
			return nil, fmt.Errorf("search: progress: %w", err)
		}
		hay := strings.ToLower(is.Title + "\n" + is.Body + "\n" + strings.Join(is.Labels, " "))
		if !allIn(words, hay) {
			continue
		}
		if len(links) == maxSearchResults {
			lines = append(lines, fmt.Sprintf("(more than %d matches; refine the query)", maxSearchResults))
			break
		}
		lines = append(lines, fmt.Sprintf("#%d [%s] %s (%s/%s)", is.Number, is.State, is.Title, is.Owner, is.Repo))
		links = append(links, corral.ResourceLink(entry{is: is, att: -1}.resource()))
	}
	summary := fmt.Sprintf("No %s issue matches %q.", args.State, args.Query)
	if len(links) > 0 {
		summary = fmt.Sprintf("%d %s issue(s) match %q:\n%s", len(links), args.State, args.Query, strings.Join(lines, "\n"))
	}
	return corral.ToolResult(append([]json.RawMessage{corral.Text(summary)}, links...)...), nil
}

func allIn(words []string, hay string) bool {
	for _, w := range words {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}
