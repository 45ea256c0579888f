// Package trust checks plugin signatures against the operator's trust
// policy (config.Trust) before a plugin's bytes reach the compiler.
//
// A signature travels with the file it signs: beside a directory drop as
// NAME.wasm.minisig (minisign, Ed25519) or NAME.wasm.sigstore.json (a
// Sigstore bundle), and beside a file pulled from an OCI registry in the
// store, where host/oci writes the signature it found as a referrer of
// the artifact. [Compile] turns a policy into a [Policy]; [Policy.Verify]
// says which trusted publisher signed the bytes, or why none did, as an
// error wrapping [ErrRefused] with a reason of its own for every case
// (unsigned, an untrusted key, a signature of other bytes, a Sigstore
// certificate for another identity or issuer).
//
// No policy means no check: a plugin with neither plugins.trust nor
// plugin.<name>.trust runs unsigned, as before signatures existed. A
// policy never means "anyone": it names its publishers.
package trust
