// Package oci pulls plugins from OCI registries into a durable local store
// and pushes them there, in the CNCF Wasm OCI artifact layout: an image
// manifest whose config has the media type application/vnd.wasm.config.v0+json
// and whose one layer is the module (application/wasm).
//
// A plugin's source (plugin.<name>.source: oci://REGISTRY/REPO@sha256:… or
// :TAG) is part of its binding: [Resolver.Bind] turns every source into the
// file the store keeps for it and pins that file's sha256, so the registry
// loads a pulled plugin exactly like a bound directory drop, through the
// same binding and trust checks. A tag is resolved to a manifest digest
// once and recorded; it is followed again only when the plugin says so
// (plugin.<name>.followTag). The store keeps every pulled artifact by
// digest, so a registry outage never stops a restart, and a download that
// does not match its digest is refused with the stored copy kept.
//
// Signatures travel as OCI 1.1 referrers of the artifact's manifest (with
// oras's tag-schema fallback for registries without the referrers API): a
// minisign signature or a Sigstore bundle, written beside the stored
// module as the sibling files host/trust reads.
package oci
