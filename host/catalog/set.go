package catalog

// Set is an immutable snapshot of providers and their claims.
type Set struct {
	providers []Provider
	opts      Options
}
