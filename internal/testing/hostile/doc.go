// Package hostile feeds git-secure's parsers and verifier hostile input and
// checks that each gets a clear error, wrapping the package's sentinel
// (rsl.ErrMalformed, policy.ErrMalformed, attest.ErrMalformed, ...), within
// bounded memory and time, and that verification of a repository holding
// such input fails closed with a message that names the entry at fault:
//
//   - an RSL entry commit with a 50 MB message, an annotation skipping
//     100 000 entries, non-canonical and invalid UTF-8 messages and
//     reasons;
//   - policy blobs of 5 MB, nested 10 000 deep, with duplicated keys
//     (also spelled with \u escapes), non-canonical encodings, 20 000 keys;
//   - attestation envelopes of 10 MB, nested, duplicated, and an approvals
//     directory with 10 000 junk files;
//   - ref names that try to escape (refs/heads/../../config, control
//     characters, embedded newlines) in entries, in pre-receive input and
//     in the remote helper's push commands.
//
// Time limits are generous timeouts (a hang is a failure), never
// performance assertions. The package has no code of its own; everything
// is in its _test.go files.
package hostile
