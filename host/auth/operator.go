package auth

import (
	"net/http"
	"slices"

	"github.com/corral-mcp/corral/abi"
)

// Operators is the operator role: the principals, named or by group, who
// may read corral's operator details (metrics, plugin status) on the MCP
// listener, where everyone else is refused. The admin listener serves the
// same details without credentials; it is the operator's to keep private.
type Operators struct {
	Principals []string
	Groups     []string
}

// Has reports whether p holds the operator role.
func (o Operators) Has(p abi.Principal) bool {
	return p.ID != "" && (slices.Contains(o.Principals, p.ID) ||
		slices.ContainsFunc(p.Groups, func(g string) bool { return slices.Contains(o.Groups, g) }))
}

// OperatorOnly serves next to requests whose credentials hold the
// operator role. Anyone else (no credentials, a bad token, a principal
// without the role) gets exactly the 404 of a path that does not exist,
// so the answer tells nobody that the endpoint is there.
func (a *Authenticator) OperatorOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.Authenticate(r)
		if err != nil || !a.opts.Operators.Has(p) {
			a.log.Debug("auth: operator endpoint refused", "remote", a.remote(r), "path", r.URL.Path)
			http.NotFound(w, r)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}
