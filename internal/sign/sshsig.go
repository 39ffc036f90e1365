package sign

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/keyless"
)

const (
	armorBegin = "-----BEGIN " + sshsig.PEMType + "-----"
	armorEnd   = "-----END " + sshsig.PEMType + "-----"
)

// SignSSHSig signs data with s under namespace and returns an armored
// ("-----BEGIN SSH SIGNATURE-----") SSHSIG signature using SHA-512, as
// `ssh-keygen -Y sign` and git with gpg.format=ssh make. RSA keys sign with
// rsa-sha2-512, so s must then implement ssh.AlgorithmSigner (the Signers of
// LoadSigner and of golang.org/x/crypto/ssh do).
//
// A MessageSigner (an OpenPGP key in gpg) signs in its own format instead:
// the result is then an armored "PGP SIGNATURE", or for a keyless
// identity (gitsign) an armored "SIGNED MESSAGE".
func SignSSHSig(s ssh.Signer, data []byte, namespace string) ([]byte, error) {
	if ms, ok := s.(MessageSigner); ok {
		raw, err := signMessage(ms, data, namespace)
		if err != nil {
			return nil, err
		}
		if isOpenPGPSignature(raw) {
			return ArmorOpenPGPSignature(raw)
		}
		if keyless.IsDER(raw) {
			return keyless.Armor(raw), nil // as gitsign writes it
		}
		sig, err := parseRaw(raw)
		if err != nil {
			return nil, err
		}
		return sshsig.Armor(sig), nil
	}
	sig, err := signSSHSig(s, data, namespace)
	if err != nil {
		return nil, err
	}
	return sshsig.Armor(sig), nil
}

// SignRaw is SignSSHSig without the armor: it returns the binary SSHSIG
// structure, for DSSE envelopes.
// A MessageSigner's raw signature is its binary OpenPGP signature.
func SignRaw(s ssh.Signer, data []byte, namespace string) ([]byte, error) {
	if ms, ok := s.(MessageSigner); ok {
		return signMessage(ms, data, namespace)
	}
	sig, err := signSSHSig(s, data, namespace)
	if err != nil {
		return nil, err
	}
	return sig.Marshal(), nil
}

// MessageSigner is a Signer that signs whole messages through another
// program rather than making raw SSH signatures: an OpenPGP key held by
// gpg-agent (internal/gpgsign), whose SignMessage returns a binary OpenPGP
// signature carrying the namespace and key notations (openpgp.go), or a
// key file signed with by ssh-keygen -Y sign (internal/sshkeygen: a
// security key not in ssh-agent), whose SignMessage returns a binary
// SSHSIG structure. Its Sign method (ssh.Signer) fails.
type MessageSigner interface {
	ssh.Signer
	SignMessage(data []byte, namespace string) ([]byte, error)
}

// signMessage signs with ms and checks the signature against ms's public
// key before returning it, so that a wrong key or a missing notation fails
// here rather than at every verifier.
func signMessage(ms MessageSigner, data []byte, namespace string) ([]byte, error) {
	if namespace == "" {
		return nil, errors.New("sign: sign: empty namespace")
	}
	pub := ms.PublicKey()
	if err := checkKey(pub); err != nil {
		return nil, fmt.Errorf("sign: sign: %w", err)
	}
	raw, err := ms.SignMessage(data, namespace)
	if err != nil {
		return nil, err
	}
	if sk, ok := pub.(*SigstoreKey); ok && sk.Trust == nil {
		return raw, checkKeylessMade(sk, raw)
	}
	fp := Fingerprint(pub)
	if _, err := VerifyRaw(raw, data, namespace, func(got string) (ssh.PublicKey, bool) { return pub, got == fp }); err != nil {
		return nil, fmt.Errorf("sign: sign with %s: the signature made does not verify: %w", fp, err)
	}
	return raw, nil
}

func signSSHSig(s ssh.Signer, data []byte, namespace string) (*sshsig.Signature, error) {
	if s == nil {
		return nil, ErrNoKey
	}
	if namespace == "" {
		return nil, errors.New("sign: sign: empty namespace")
	}
	pub := s.PublicKey()
	if err := checkKey(pub); err != nil {
		return nil, fmt.Errorf("sign: sign: %w", err)
	}
	sig, err := sshsig.SignWithRand(bytes.NewReader(data), rand.Reader, s, sshsig.HashSHA512, namespace)
	if err != nil {
		return nil, fmt.Errorf("sign: sign with %s: %w", Fingerprint(pub), err)
	}
	return sig, nil
}

// VerifySSHSig verifies an armored SSHSIG signature of data. It parses the
// armor strictly, requires the signature's namespace to equal namespace and
// its hash algorithm to be sha512 or sha256, and asks lookup for the trusted
// key with the fingerprint of the key embedded in the signature. If lookup
// has no key, or a key that differs from the embedded one, it fails with
// ErrUnknownKey; if the signature is malformed, for another namespace or
// hash, or does not verify with the trusted key, with ErrBadSignature. On
// success it returns the trusted key.
//
// An armored OpenPGP signature ("-----BEGIN PGP SIGNATURE-----") is
// verified as VerifyRaw verifies its body.
func VerifySSHSig(armored, data []byte, namespace string, lookup func(fingerprint string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	if keyless.IsArmored(armored) {
		der, err := keyless.Unarmor(armored)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadSignature, err)
		}
		return VerifyRaw(der, data, namespace, lookup)
	}
	if isArmoredOpenPGPSignature(armored) {
		raw, err := unarmorOpenPGPSignature(armored)
		if err != nil {
			return nil, err
		}
		return VerifyRaw(raw, data, namespace, lookup)
	}
	// An ed25519 entry signature is under 200 bytes: decoded on the stack.
	var buf [512]byte
	raw, err := unarmorInto(buf[:0], armored)
	if err != nil {
		return nil, err
	}
	return VerifyRaw(raw, data, namespace, lookup)
}

// VerifyRaw is VerifySSHSig for the binary SSHSIG structure made by SignRaw.
// A binary OpenPGP signature (which SignRaw makes for an OpenPGP key) is
// verified by the same rules: its namespace notation must equal namespace,
// and lookup is asked for the key its key notation names (see
// openpgp.go).
func VerifyRaw(sig, data []byte, namespace string, lookup func(fingerprint string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	if namespace == "" {
		return nil, errors.New("sign: verify: empty namespace")
	}
	if lookup == nil {
		return nil, errors.New("sign: verify: no key lookup")
	}
	if isOpenPGPSignature(sig) {
		// A copy, so that sig (often on the caller's stack) is kept by
		// nothing.
		return verifyOpenPGP(bytes.Clone(sig), data, namespace, lookup)
	}
	if keyless.IsDER(sig) {
		return verifyKeyless(bytes.Clone(sig), data, namespace, lookup)
	}
	f, err := parseSSHSIG(sig)
	if err != nil {
		return nil, err
	}
	if f.keyType == ssh.KeyAlgoRSA {
		return verifyRSA(bytes.Clone(sig), data, namespace, lookup)
	}
	return verifyFast(&f, data, namespace, lookup)
}

// verifyRSA verifies an SSHSIG signature by an RSA key through
// hiddeco/sshsig and golang.org/x/crypto/ssh.
func verifyRSA(sig, data []byte, namespace string, lookup func(fingerprint string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	parsed, err := parseRaw(sig)
	if err != nil {
		return nil, err
	}
	if parsed.Namespace != namespace {
		return nil, fmt.Errorf("%w: namespace %.64q, want %q", ErrBadSignature, parsed.Namespace, namespace)
	}
	fp := Fingerprint(parsed.PublicKey)
	trusted, ok := lookup(fp)
	if !ok || trusted == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnknownKey, fp)
	}
	if !bytes.Equal(trusted.Marshal(), parsed.PublicKey.Marshal()) {
		return nil, fmt.Errorf("%w: %s (trusted key with that fingerprint differs from the signing key)", ErrUnknownKey, fp)
	}
	if err := checkKey(trusted); err != nil {
		return nil, fmt.Errorf("sign: verify: %w", err)
	}
	if err := sshsig.Verify(bytes.NewReader(data), parsed, trusted, parsed.HashAlgorithm, namespace); err != nil {
		return nil, fmt.Errorf("%w: key %s: %v", ErrBadSignature, fp, err)
	}
	return trusted, nil
}

// SignatureFingerprint returns the fingerprint of the key embedded in an
// armored signature, without verifying anything: use it only to find a key
// or to explain an error.
func SignatureFingerprint(armored []byte) (string, error) {
	if keyless.IsArmored(armored) {
		der, err := keyless.Unarmor(armored)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrBadSignature, err)
		}
		return keylessFingerprint(der)
	}
	if isArmoredOpenPGPSignature(armored) {
		raw, err := unarmorOpenPGPSignature(armored)
		if err != nil {
			return "", err
		}
		return openPGPSignatureFingerprint(raw)
	}
	raw, err := UnarmorSSHSig(armored)
	if err != nil {
		return "", err
	}
	f, err := parseSSHSIG(raw)
	if err != nil {
		return "", err
	}
	return blobFingerprint(f.key), nil
}

// UnarmorSSHSig returns the binary SSHSIG structure of an armored SSH
// signature, parsed as strictly as VerifySSHSig parses it (without
// verifying it). Errors wrap ErrBadSignature.
func UnarmorSSHSig(armored []byte) ([]byte, error) {
	raw, err := unarmorInto(nil, armored)
	if err != nil {
		return nil, err
	}
	f, err := parseSSHSIG(raw)
	if err != nil {
		return nil, err
	}
	if f.keyType == ssh.KeyAlgoRSA {
		if _, err := parseRaw(raw); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

// parseRaw parses a binary SSHSIG structure strictly: version 1, a supported
// key type, sha512 or sha256, an empty reserved field, and an encoding that
// re-marshals to exactly the input.
func parseRaw(raw []byte) (*sshsig.Signature, error) {
	if len(raw) > MaxSignatureSize {
		return nil, fmt.Errorf("%w: signature of %d bytes exceeds %d", ErrBadSignature, len(raw), MaxSignatureSize)
	}
	// Say what is wrong with the refusals that the parser below only calls
	// malformed: a DSA key (which it cannot parse) and an RSA signature
	// over SHA-1 (which it refuses as an invalid format).
	keyType, algo := peekSSHSIG(raw)
	if keyType == ssh.InsecureKeyAlgoDSA {
		return nil, fmt.Errorf("%w: signing key: %w", ErrBadSignature, errDSA)
	}
	if keyType == ssh.KeyAlgoRSA && algo == ssh.KeyAlgoRSA {
		return nil, fmt.Errorf("%w: %w", ErrBadSignature, errSHA1RSA)
	}
	sig, err := sshsig.ParseSignature(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: malformed: %v", ErrBadSignature, err)
	}
	if sig.PublicKey == nil || sig.Signature == nil {
		return nil, fmt.Errorf("%w: malformed: missing key or signature", ErrBadSignature)
	}
	if err := checkKey(sig.PublicKey); err != nil {
		return nil, fmt.Errorf("%w: signing key: %w", ErrBadSignature, err)
	}
	if err := checkSignatureAlgorithm(sig.PublicKey, sig.Signature.Format); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	if h := sig.HashAlgorithm; h != sshsig.HashSHA512 && h != sshsig.HashSHA256 {
		return nil, fmt.Errorf("%w: hash algorithm %.16q", ErrBadSignature, h)
	}
	if isSKType(sig.PublicKey.Type()) {
		// A security key's signature ends in its flags and counter.
		if _, _, err := SKSignatureFields(sig.Signature.Rest); err != nil {
			return nil, err
		}
	} else if len(sig.Signature.Rest) != 0 {
		return nil, fmt.Errorf("%w: malformed: trailing data in signature", ErrBadSignature)
	}
	// Reject anything the parser skipped or normalized (reserved field,
	// trailing bytes, non-canonical encodings).
	if !bytes.Equal(sig.Marshal(), raw) {
		return nil, fmt.Errorf("%w: malformed: non-canonical encoding", ErrBadSignature)
	}
	return sig, nil
}

// errSHA1RSA refuses RSA signatures made with the old "ssh-rsa" algorithm,
// which hashes with SHA-1: SHA-1 collisions are practical (SHA-1 is a
// Shambles, 2020), and ssh-keygen -Y verify refuses such signatures too.
var errSHA1RSA = errors.New("RSA signature over SHA-1 (ssh-rsa) is not accepted, as ssh-keygen -Y verify refuses it: sign again with rsa-sha2-512 (what ssh-keygen -Y sign, git and git-secure use)")

// checkSignatureAlgorithm refuses a signature algorithm that does not go
// with pub: RSA keys must sign with rsa-sha2-512 or rsa-sha2-256, other keys
// with their one algorithm, named like the key. The SSHSIG parser checks
// the RSA case too; this keeps the rule here, whatever the parser does.
func checkSignatureAlgorithm(pub ssh.PublicKey, algo string) error {
	if pub.Type() != ssh.KeyAlgoRSA {
		if algo != pub.Type() {
			return fmt.Errorf("signature algorithm %.32q for a %s key", algo, pub.Type())
		}
		return nil
	}
	switch algo {
	case ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256:
		return nil
	case ssh.KeyAlgoRSA:
		return errSHA1RSA
	}
	return fmt.Errorf("signature algorithm %.32q for an RSA key (want rsa-sha2-512 or rsa-sha2-256)", algo)
}

// peekSSHSIG returns the type of the key embedded in a binary SSHSIG
// structure and the algorithm of its signature, without checking anything
// else: "SSHSIG", uint32 version, then SSH strings public key, namespace,
// reserved, hash algorithm and signature (itself the strings algorithm and
// blob). A field it cannot reach is "".
func peekSSHSIG(raw []byte) (keyType, algo string) {
	rest, ok := bytes.CutPrefix(raw, []byte("SSHSIG"))
	if !ok || len(rest) < 4 {
		return "", ""
	}
	rest = rest[4:]
	var key, field []byte
	key, rest, ok = sshString(rest, true)
	if typ, _, tok := sshString(key, ok); tok {
		keyType = string(typ)
	}
	for range 4 { // namespace, reserved, hash algorithm, signature
		field, rest, ok = sshString(rest, ok)
	}
	if typ, _, aok := sshString(field, ok); aok {
		algo = string(typ)
	}
	return keyType, algo
}

// verifySSHSignature checks a raw SSH signature over data made by pub.
func verifySSHSignature(pub ssh.PublicKey, data []byte, sig *ssh.Signature) error {
	if err := pub.Verify(data, sig); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	return nil
}
