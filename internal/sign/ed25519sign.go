package sign

import (
	"crypto/ed25519"
	"crypto/fips140"
	"crypto/sha512"

	"filippo.io/edwards25519"
	"golang.org/x/crypto/ssh"
)

// signEd25519 is Ed25519 signing (RFC 8032, section 5.1.6) of message with
// priv (seed and public key, as crypto/ed25519 keeps them), giving the
// same bytes as ed25519.Sign: Ed25519 is deterministic. It computes R =
// rB with edwards25519's constant-time variable-base multiplication
// instead of crypto/ed25519's fixed-base one, whose precomputed table of
// multiples of B (built once per process on the first signature) costs
// about 1.2 ms of CPU: more than the rest of a signature, in a process
// that signs once (rsl record, a push). The multiplication itself takes
// about 0.07 ms. Secret values (the scalar s, the nonce r) only meet
// constant-time code.
func signEd25519(priv ed25519.PrivateKey, message []byte) []byte {
	h := sha512.Sum512(priv[:ed25519.SeedSize])
	s, err := edwards25519.NewScalar().SetBytesWithClamping(h[:32])
	if err != nil {
		panic("sign: ed25519: clamping a 32-byte scalar failed")
	}
	mh := sha512.New()
	mh.Write(h[32:])
	mh.Write(message)
	r, err := edwards25519.NewScalar().SetUniformBytes(mh.Sum(nil))
	if err != nil {
		panic("sign: ed25519: reducing a 64-byte hash failed")
	}
	R := new(edwards25519.Point).ScalarMult(r, edwards25519.NewGeneratorPoint())
	kh := sha512.New()
	kh.Write(R.Bytes())
	kh.Write(priv[ed25519.SeedSize:])
	kh.Write(message)
	k, err := edwards25519.NewScalar().SetUniformBytes(kh.Sum(nil))
	if err != nil {
		panic("sign: ed25519: reducing a 64-byte hash failed")
	}
	S := edwards25519.NewScalar().MultiplyAdd(k, s, r)
	sig := make([]byte, 0, ed25519.SignatureSize)
	return append(append(sig, R.Bytes()...), S.Bytes()...)
}

// rawEd25519 returns the Ed25519 private key of the private key file
// contents data when they hold one whose public half is pub, else nil
// (another key type; signing then goes through the ssh package alone).
// In FIPS 140 mode it is always nil: signatures then come from Go's
// validated module.
func rawEd25519(data []byte, pub ssh.PublicKey) ed25519.PrivateKey {
	if pub.Type() != ssh.KeyAlgoED25519 || fips140.Enabled() {
		return nil
	}
	raw, err := ssh.ParseRawPrivateKey(data)
	if err != nil {
		return nil
	}
	var priv ed25519.PrivateKey
	switch k := raw.(type) {
	case ed25519.PrivateKey:
		priv = k
	case *ed25519.PrivateKey:
		priv = *k
	default:
		return nil
	}
	cp, ok := pub.(ssh.CryptoPublicKey)
	if !ok || len(priv) != ed25519.PrivateKeySize {
		return nil
	}
	if want, ok := cp.CryptoPublicKey().(ed25519.PublicKey); !ok || !want.Equal(priv.Public()) {
		return nil
	}
	return priv
}
