package sign

import (
	"crypto/ed25519"
	"crypto/rand"
	"math/big"
	"testing"
)

// ed25519Order is L, the order of the base point's group.
var ed25519Order, _ = new(big.Int).SetString("7237005577332262213973186563042994240857116359379907606001950938285454250989", 10)

// leBytes is n as 32 little-endian bytes.
func leBytes(n *big.Int) []byte {
	b := n.FillBytes(make([]byte, 32))
	for i, j := 0, 31; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return b
}

// VerifyEd25519 decides as crypto/ed25519.Verify for valid signatures and
// every way of spoiling one: a flipped bit anywhere, S + L (the same
// signature with a non-canonical S), the top bits of S set, wrong lengths,
// another message, and public keys that are not canonical or not points
// (small-order points, y >= p, the identity), with signatures both accept.
func TestVerifyEd25519MatchesStdlib(t *testing.T) {
	check := func(pub ed25519.PublicKey, msg, sig []byte) {
		t.Helper()
		want := len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, sig)
		if got := VerifyEd25519(pub, msg, sig); got != want {
			t.Fatalf("pub %x msg %x sig %x: VerifyEd25519 %v, crypto/ed25519 %v", []byte(pub), msg, sig, got, want)
		}
	}
	for i := 0; i < 200; i++ {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		msg := make([]byte, i)
		rand.Read(msg)
		sig := ed25519.Sign(priv, msg)
		if !VerifyEd25519(pub, msg, sig) {
			t.Fatalf("a valid signature %x did not verify", sig)
		}
		check(pub, msg, sig)
		check(pub, append(msg, 0), sig)
		check(pub, msg, sig[:63])
		check(pub, msg, append(sig, 0))
		check(pub[:31], msg, sig)
		bad := append([]byte(nil), sig...)
		bad[i%64] ^= 1 << (i % 8)
		check(pub, msg, bad)
		badPub := append([]byte(nil), pub...)
		badPub[i%32] ^= 1 << (i % 8)
		check(badPub, msg, sig)
		// S + L: the same point equation, S not canonical.
		s := new(big.Int).SetBytes(reverse(sig[32:]))
		if sl := new(big.Int).Add(s, ed25519Order); sl.BitLen() <= 256 {
			check(pub, msg, append(append([]byte(nil), sig[:32]...), leBytes(sl)...))
		}
		high := append([]byte(nil), sig...)
		high[63] |= 0x80
		check(pub, msg, high)
	}
	// Public keys that are not ordinary: the identity (y = 1), y = -1 (a
	// small-order point), y = p + 1 (a non-canonical encoding of the
	// identity), all 0xff, all zero. With the signature (R = identity,
	// S = 0) a small-order key admits.
	identity := make([]byte, 32)
	identity[0] = 1
	minusOne := leBytes(new(big.Int).Sub(p25519(), big.NewInt(1)))
	pPlusOne := leBytes(new(big.Int).Add(p25519(), big.NewInt(1)))
	ff := make([]byte, 32)
	for i := range ff {
		ff[i] = 0xff
	}
	ff[31] = 0x7f
	sig := append(append([]byte(nil), identity...), make([]byte, 32)...)
	for _, pub := range [][]byte{identity, minusOne, pPlusOne, ff, make([]byte, 32)} {
		for _, msg := range [][]byte{nil, []byte("x"), []byte("git-secure")} {
			check(pub, msg, sig)
			check(pub, msg, make([]byte, 64))
		}
	}
}

func p25519() *big.Int {
	p := new(big.Int).Lsh(big.NewInt(1), 255)
	return p.Sub(p, big.NewInt(19))
}

func reverse(b []byte) []byte {
	r := make([]byte, len(b))
	for i := range b {
		r[len(b)-1-i] = b[i]
	}
	return r
}

// FuzzVerifyEd25519: VerifyEd25519 and crypto/ed25519.Verify agree on any
// key, message and signature (seeded with valid ones).
func FuzzVerifyEd25519(f *testing.F) {
	for i := 0; i < 4; i++ {
		pub, priv, _ := ed25519.GenerateKey(rand.Reader)
		msg := []byte{byte(i), 'm'}
		f.Add([]byte(pub), msg, ed25519.Sign(priv, msg))
	}
	f.Fuzz(func(t *testing.T, pub, msg, sig []byte) {
		if len(pub) != ed25519.PublicKeySize {
			return // crypto/ed25519 panics
		}
		if got, want := VerifyEd25519(pub, msg, sig), ed25519.Verify(pub, msg, sig); got != want {
			t.Fatalf("pub %x msg %x sig %x: VerifyEd25519 %v, crypto/ed25519 %v", pub, msg, sig, got, want)
		}
	})
}

func BenchmarkVerifyEd25519(b *testing.B) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	sig := ed25519.Sign(priv, []byte("m"))
	for b.Loop() {
		if !VerifyEd25519(pub, []byte("m"), sig) {
			b.Fatal("does not verify")
		}
	}
}
