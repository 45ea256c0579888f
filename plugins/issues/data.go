package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/corral-mcp/corral/abi"
	corral "github.com/corral-mcp/corral/sdk-guest"
)

// tracker is the content of the data file.
type tracker struct {
	TriageGuide string   `json:"triageGuide"`
	Areas       []string `json:"areas"`
	Issues      []*issue `json:"issues"`
}

type issue struct {
	Number      int          `json:"number"`
	Owner       string       `json:"owner"`
	Repo        string       `json:"repo"`
	Title       string       `json:"title"`
	Body        string       `json:"body"`
	State       string       `json:"state"`
	Author      string       `json:"author"`
	Labels      []string     `json:"labels"`
	Area        string       `json:"area"`
	Priority    string       `json:"priority"` // low, medium, high or critical
	CreatedAt   string       `json:"createdAt"`
	UpdatedAt   string       `json:"updatedAt"`
	Comments    []comment    `json:"comments"`
	Attachments []attachment `json:"attachments"`
	// VisibleTo limits the issue to principals in one of these groups.
	VisibleTo []string `json:"visibleTo"`

	rendered string // cached Markdown, see markdown
}

type comment struct {
	Author    string `json:"author"`
	Body      string `json:"body"`
	CreatedAt string `json:"createdAt"`
}

// attachment holds its bytes inline (Data, base64 in JSON) or names a file
// relative to the data file's directory.
type attachment struct {
	Name     string `json:"name"`
	MimeType string `json:"mimeType"`
	Data     []byte `json:"data"`
	File     string `json:"file"`
}

// visible reports whether pr may see the issue.
func (is *issue) visible(pr abi.Principal) bool {
	if len(is.VisibleTo) == 0 {
		return true
	}
	for _, g := range pr.Groups {
		if slices.Contains(is.VisibleTo, g) {
			return true
		}
	}
	return false
}

func (is *issue) attachment(name string) *attachment {
	for i := range is.Attachments {
		if is.Attachments[i].Name == name {
			return &is.Attachments[i]
		}
	}
	return nil
}

// parseTracker decodes and checks a data file; issues come out sorted by
// number.
func parseTracker(b []byte) (*tracker, error) {
	var t tracker
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	seen := map[int]bool{}
	var errs []error
	for _, is := range t.Issues {
		switch {
		case is == nil:
			errs = append(errs, errors.New("null issue"))
			continue
		case is.Number <= 0 || seen[is.Number]:
			errs = append(errs, fmt.Errorf("issue number %d is not positive and unique", is.Number))
		case !validSegment(is.Owner) || !validSegment(is.Repo):
			errs = append(errs, fmt.Errorf("issue %d: owner %q and repo %q must be simple names", is.Number, is.Owner, is.Repo))
		}
		seen[is.Number] = true
		names := map[string]bool{}
		for _, a := range is.Attachments {
			if !validSegment(a.Name) || names[a.Name] {
				errs = append(errs, fmt.Errorf("issue %d: attachment name %q must be a unique simple name", is.Number, a.Name))
			}
			names[a.Name] = true
			if a.File != "" && (path.IsAbs(a.File) || path.Clean(a.File) != a.File || strings.HasPrefix(a.File, "..")) {
				errs = append(errs, fmt.Errorf("issue %d: attachment file %q must be a clean relative path", is.Number, a.File))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	sort.Slice(t.Issues, func(i, j int) bool { return t.Issues[i].Number < t.Issues[j].Number })
	return &t, nil
}

// validSegment reports whether s can stand alone in a URI path segment.
func validSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-", c)) {
			return false
		}
	}
	return true
}

// store loads the tracker through the host and keeps it until the data
// file's size or modification time changes.
type store struct {
	dataPath string
	stamp    string // size and mtime of the loaded file
	t        *tracker
}

// load returns the current tracker.
func (s *store) load() (*tracker, error) {
	if s.dataPath == "" {
		p, err := dataPath()
		if err != nil {
			return nil, err
		}
		s.dataPath = p
	}
	fi, err := corral.Files.Stat(s.dataPath)
	if err != nil {
		return nil, fmt.Errorf("issues: data file %s: %w", s.dataPath, err)
	}
	stamp := fmt.Sprint(fi.Size, " ", fi.ModTime)
	if s.t != nil && stamp == s.stamp && fi.ModTime != "" {
		return s.t, nil
	}
	b, err := corral.Files.Read(s.dataPath)
	if err != nil {
		return nil, fmt.Errorf("issues: data file %s: %w", s.dataPath, err)
	}
	t, err := parseTracker(b)
	if err != nil {
		return nil, corral.Internal(fmt.Sprintf("issues: data file %s: %v", s.dataPath, err))
	}
	s.t, s.stamp = t, stamp
	return t, nil
}

// dataPath finds the data file: config value "data", absolute or relative
// to the first granted root.
func dataPath() (string, error) {
	v, err := corral.Config.Get("data")
	if errors.Is(err, corral.ErrNotFound) || (err == nil && v == "") {
		return "", corral.Internal(`issues: the config value "data" (path of the issues file) is not set`)
	}
	if err != nil {
		return "", err
	}
	if path.IsAbs(v) {
		return path.Clean(v), nil
	}
	roots, err := corral.Files.Roots()
	if err != nil {
		return "", err
	}
	if len(roots) == 0 {
		return "", corral.Internal("issues: no file root is granted to resolve " + v)
	}
	return path.Join(roots[0], v), nil
}

// attachmentData returns the bytes of a.
func (s *store) attachmentData(a *attachment) ([]byte, error) {
	if a.File == "" {
		return a.Data, nil
	}
	return corral.Files.Read(path.Join(path.Dir(s.dataPath), a.File))
}
