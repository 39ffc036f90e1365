package sign

import "crypto/ed25519"

// Warm does the one-time set-up of the signature code in the calling
// goroutine: Go's FIPS self-tests and ed25519's precomputed tables, which
// the first signature or verification of a process otherwise pays (about
// 2 ms here). The helper and the server's hook, which live a few tens of
// milliseconds and sign or verify once or twice, run it in the background
// while they wait for git.
func Warm() {
	var seed [ed25519.SeedSize]byte
	key := ed25519.NewKeyFromSeed(seed[:])
	msg := []byte("git-secure warm-up")
	ed25519.Verify(key.Public().(ed25519.PublicKey), msg, ed25519.Sign(key, msg))
}
