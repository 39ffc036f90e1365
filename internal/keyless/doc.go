// Package keyless verifies keyless Sigstore signatures as gitsign makes
// them, offline: a CMS (PKCS #7) detached signature whose only key is a
// short-lived Fulcio certificate naming an OIDC identity, with the Rekor
// transparency log entry that proves when it was made embedded in the
// signature (gitsign's offline Rekor mode, GITSIGN_REKOR_MODE=offline).
//
// # What it trusts
//
// Only the [Trust] the caller pins: Fulcio root (and intermediate)
// certificates and the Rekor public key, from the policy. Everything in a
// signature is hostile and is checked before use:
//
//   - the armor is exactly one "SIGNED MESSAGE" PEM block of at most
//     [MaxSignatureSize] bytes; the CMS structure is DER with one signer,
//     at most [maxCerts] certificates, sha256 and ECDSA, and signed
//     attributes that are exactly content type (id-data), signing time
//     and message digest;
//   - the message digest is sha256 of the signed content ([Content]: the
//     data itself for the git namespace, as gitsign signs a commit or tag,
//     or the data framed with its namespace for git-secure's other
//     signatures, so that one can never stand for another);
//   - the leaf certificate chains to a pinned root at the time Rekor
//     integrated the entry (never at the signer's clock or now: Fulcio
//     certificates live ten minutes), for code signing;
//   - the Rekor entry (a hashedrekord over sha256 of the signed
//     attributes, with this signature and certificate) carries a signed
//     entry timestamp verified with the pinned Rekor key, and an inclusion
//     proof up to a checkpoint signed by the same key; both are required;
//   - the identity is the certificate's OIDC issuer (Fulcio extension
//     1.3.6.1.4.1.57264.1.8, or the older .1.1; both must agree) and its
//     only subject alternative name (an email address or a URI).
//
// Rekor v2 entries (no signed entry timestamp) and RFC 3161 timestamps are
// not accepted: they would need a pinned timestamp authority.
//
// The package has no global mutable state, reads no files and runs no
// processes; all functions are safe for concurrent use.
package keyless
