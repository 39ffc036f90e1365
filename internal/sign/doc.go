// Package sign holds git-secure's SSH keys and signatures: loading a signing
// key (from a private key file or from ssh-agent), SSHSIG signatures
// compatible with `ssh-keygen -Y sign/verify` and git's gpg.format=ssh, raw
// SSHSIG blobs for DSSE envelopes, and adapters between SSH keys and TUF
// (go-tuf) keys and signers.
//
// # What it trusts
//
// Nothing that arrives inside a signature is trusted. A signature names the
// key that made it, but verification only uses that key to find a trusted
// key: the caller's lookup function, called with the embedded key's SHA256
// fingerprint, decides which keys are trusted, and the trusted key must be
// byte-for-byte the embedded key. The namespace is fixed by the caller and
// must match exactly; the hash algorithm must be sha512 or sha256. Armored
// signatures are parsed strictly (exactly one "SSH SIGNATURE" PEM block, no
// headers, nothing but whitespace after it, at most [MaxSignatureSize]
// bytes) and a signature blob must re-encode to exactly the bytes given.
// Accepted key types are ed25519, ECDSA on NIST P-256/P-384/P-521, RSA of
// 2048 to 16384 bits, FIDO security keys (sk-ssh-ed25519@openssh.com and
// sk-ecdsa-sha2-nistp256@openssh.com, sk.go: user presence always
// required, user verification with the verify-required option) and
// OpenPGP keys (openpgp.go, verified with ProtonMail's go-crypto; their
// signatures carry the namespace in a notation); certificates are
// rejected with [ErrUnsupportedKey]; DSA keys and RSA keys outside that
// range fail with an [UnsupportedKeyError] that says what is wrong and
// what to use instead. Every key kind is an ssh.PublicKey, so that the
// policy, the log and the attestations treat them alike.
// RSA signatures are always made with rsa-sha2-512 and never with SHA-1
// ssh-rsa, and an RSA signature made with ssh-rsa is refused, as
// ssh-keygen -Y verify refuses it.
//
// Signing keys come from configuration values passed in by the caller
// ([KeySpec]); this package never runs git, ssh-keygen, gpg or any other
// process, and never reads the environment (internal/gpgsign runs gpg and
// hands this package a [MessageSigner], as internal/sshkeygen does for a
// security key file that ssh-agent does not hold). A security key signs
// through ssh-agent or ssh-keygen, which ask the device: every signature
// waits for a touch. Private keys in ssh-agent are chosen by
// public key fingerprint, never by position. Passphrase-protected key files
// are never decrypted: such keys must be in ssh-agent.
//
// # Concurrency
//
// The package has no global mutable state. All functions are safe for
// concurrent use. A [Signer] returned by [LoadSigner] is safe for concurrent
// use until Close is called; a Signer backed by ssh-agent shares one agent
// connection between its callers. Randomness comes only from crypto/rand or
// from an io.Reader the caller passes.
package sign
