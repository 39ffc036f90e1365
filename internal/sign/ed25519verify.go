package sign

import (
	"bytes"
	"crypto/ed25519"
	"crypto/fips140"
	"crypto/sha512"

	"filippo.io/edwards25519"
)

// VerifyEd25519 reports whether sig is pub's Ed25519 signature of message,
// deciding exactly as crypto/ed25519.Verify does (RFC 8032 section 5.1.7,
// cofactorless: a signature length of 64, the top three bits of S clear, S
// below the group order, A a point of the curve in any encoding Go
// accepts, then R compared byte for byte with [S]B - [k]A). It computes
// [k](-A) + [S]B with edwards25519's variable-time multi-scalar
// multiplication instead of crypto/ed25519's, whose table of odd multiples
// of the base point is built on a process's first verification: 0.24 ms,
// as long as four or five verifications take without it. For processes
// that check a few signatures (the policy's, in a record or a push's
// helper); one that checks thousands (verify) uses crypto/ed25519, whose
// table then pays for itself. In FIPS 140 mode it is crypto/ed25519.
func VerifyEd25519(pub ed25519.PublicKey, message, sig []byte) bool {
	if len(pub) != ed25519.PublicKeySize {
		return false // crypto/ed25519 panics
	}
	if fips140.Enabled() {
		return ed25519.Verify(pub, message, sig)
	}
	if len(sig) != ed25519.SignatureSize || sig[63]&224 != 0 {
		return false
	}
	A, err := new(edwards25519.Point).SetBytes(pub)
	if err != nil {
		return false
	}
	kh := sha512.New()
	kh.Write(sig[:32])
	kh.Write(pub)
	kh.Write(message)
	k, err := edwards25519.NewScalar().SetUniformBytes(kh.Sum(nil))
	if err != nil {
		return false
	}
	S, err := edwards25519.NewScalar().SetCanonicalBytes(sig[32:])
	if err != nil {
		return false
	}
	minusA := new(edwards25519.Point).Negate(A)
	R := new(edwards25519.Point).VarTimeMultiScalarMult(
		[]*edwards25519.Scalar{k, S}, []*edwards25519.Point{minusA, edwards25519.NewGeneratorPoint()})
	return bytes.Equal(sig[:32], R.Bytes())
}
