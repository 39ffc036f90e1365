package policy

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/theupdateframework/go-tuf/v2/metadata"
)

func TestVerifyMetadata(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := metadata.KeyFromPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte(`{"signed":"policy"}`)
	sig := ed25519.Sign(priv, payload)
	wrongScheme := *tk
	wrongScheme.Scheme = metadata.KeySchemeECDSA_SHA2_P256
	tests := []struct {
		name    string
		key     *metadata.Key
		payload []byte
		sig     []byte
		want    bool
	}{
		{"good", tk, payload, sig, true},
		{"other payload", tk, []byte(`{"signed":"policy!"}`), sig, false},
		{"truncated signature", tk, payload, sig[:63], false},
		{"scheme does not match the key type", &wrongScheme, payload, sig, false},
		{"no signature", tk, payload, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &Key{TUF: tc.key}
			if got := k.VerifyMetadata(tc.payload, tc.sig); got != tc.want {
				t.Fatalf("VerifyMetadata = %v, want %v", got, tc.want)
			}
		})
	}
}
