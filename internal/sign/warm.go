package sign

import (
	"crypto/ed25519"
	"encoding/hex"
)

// Warm does the one-time set-up of the signature code in the calling
// goroutine, which the first verification of a process otherwise pays:
// the helper, which lives a few tens of milliseconds and signs and
// verifies, runs it in the background while it waits for git. Signing
// needs no set-up (Ed25519 key files sign through signEd25519, which uses
// no table; agent keys sign in the agent), so it is WarmVerify.
func Warm() { WarmVerify() }

// WarmVerify is Warm for a process that only verifies (the server's
// hook): one verification of a fixed signature. Signing's table (the
// multiples of the base point in affine form, one field inversion each)
// costs about four times verification's and a verifier never uses it:
// Warm spent 13 % of the pre-receive hook's CPU on it.
func WarmVerify() { ed25519.Verify(warmPublic, []byte(warmMessage), warmSignature) }

// warmMessage is what the warm-ups sign; warmPublic and warmSignature are
// Warm's key (the all-zero seed) and its signature of warmMessage, fixed
// so that WarmVerify need not sign (TestWarmVerifyChecksAValidSignature).
const warmMessage = "git-secure warm-up"

var (
	warmPublic    = ed25519.PublicKey(mustHex("3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29"))
	warmSignature = mustHex("ea134e936272beabc546135a25790efd2cb54b01e9deb752b00959fbe36e7780f693f6f438c3a435a85ab5ee640b65bcd5324fa856e01f45ee3a0ca5cc17bd00")
)

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
