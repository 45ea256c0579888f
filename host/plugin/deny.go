package plugin

// denyReason says why a host call was refused or dropped. It is the
// reason label of the denied metric (Observer.Denied), so it is one of the
// constants below and never carries anything a guest chose (a host, a
// path, a URI): a plugin cannot grow the metric's cardinality by asking
// for new things. What the guest asked for goes to the debug log instead.
type denyReason string

// The reasons a host call is refused or dropped.
const (
	denyNotGranted  denyReason = "not granted"
	denyRateLimited denyReason = "rate limited"
	denyQueueFull   denyReason = "queue full"
	// notify
	denyForeignURI denyReason = "uri outside the plugin's schemes"
	// files
	denyRelative     denyReason = "relative path"
	denyDotDot       denyReason = "path contains .."
	denyOutsideRoots denyReason = "path outside the granted roots"
	denyEscape       denyReason = "symlink leads outside its root"
	denyNotRegular   denyReason = "not a regular file"
	denyHardLinks    denyReason = "file has several hard links"
	// http
	denyScheme      denyReason = "scheme not allowed"
	denyCredentials denyReason = "credentials in url"
	denyHost        denyReason = "host not granted"
	denyAddress     denyReason = "address not public"
)

// denyReasons lists every reason, for tests that bound the metric.
var denyReasons = []denyReason{
	denyNotGranted, denyRateLimited, denyQueueFull, denyForeignURI,
	denyRelative, denyDotDot, denyOutsideRoots, denyEscape, denyNotRegular, denyHardLinks,
	denyScheme, denyCredentials, denyHost, denyAddress,
}
