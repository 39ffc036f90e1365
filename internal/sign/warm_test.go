package sign

import (
	"crypto/ed25519"
	"testing"
)

// WarmVerify warms verification only if its fixed signature verifies (a
// failing check returns early, before the table is used), and the fixed
// key and signature must be Warm's.
func TestWarmVerifyChecksAValidSignature(t *testing.T) {
	if !ed25519.Verify(warmPublic, []byte(warmMessage), warmSignature) {
		t.Fatal("the fixed warm-up signature does not verify")
	}
	var seed [ed25519.SeedSize]byte
	key := ed25519.NewKeyFromSeed(seed[:])
	if !key.Public().(ed25519.PublicKey).Equal(warmPublic) {
		t.Fatal("warmPublic is not the all-zero seed's key")
	}
	if got := ed25519.Sign(key, []byte(warmMessage)); string(got) != string(warmSignature) {
		t.Fatalf("warmSignature is not Warm's signature: %x", got)
	}
}
