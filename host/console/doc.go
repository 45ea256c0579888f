// Package console serves corral's operator console: HTML pages, rendered
// on the server with html/template, that show the plugin set being served
// (its generation, each plugin's claims, capabilities requested and
// granted, limits, instances, quarantine, last errors, call rates and
// latency) and a browser of what it serves (resources read, templates
// filled with completion as the operator types, prompts run).
//
// The console is a client like any other: every list, read, completion and
// prompt goes through the catalog's current Set as the principal
// Options.Principal names, so the policy applies to the operator too. It
// has no authentication of its own: the server mounts it on the operator
// surface (the admin listener, or the HTTP listener behind the operator
// role) behind the Host and Origin check. Everything a plugin supplied
// (names, titles, descriptions, content) reaches the page through
// html/template's contextual escaping; images are shown only for raster
// types, as data: URLs, and other blobs are downloads.
//
// The pages need no build step and load nothing from elsewhere: the
// templates, the style sheet and the one small script are embedded. The
// overview refreshes its plugin table by polling a fragment, so a plugin
// added to the directory appears without a reload.
package console
