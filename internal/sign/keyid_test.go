package sign

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"testing"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// goTUFID is go-tuf's key ID of a fresh copy of k (go-tuf caches the ID in
// the key).
func goTUFID(t testing.TB, k *metadata.Key) string {
	t.Helper()
	c := &metadata.Key{Type: k.Type, Scheme: k.Scheme, Value: metadata.KeyVal{PublicKey: k.Value.PublicKey, UnrecognizedFields: k.Value.UnrecognizedFields}, UnrecognizedFields: k.UnrecognizedFields}
	id, err := c.ID()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestKeyID: KeyID gives go-tuf's key ID for real keys of every kind the
// policy holds (many of each), and for keys whose strings need escaping,
// are not UTF-8 or carry unknown fields.
func TestKeyID(t *testing.T) {
	var keys []*metadata.Key
	add := func(k *metadata.Key, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	for range 50 {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		add(metadata.KeyFromPublicKey(pub))
		ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		add(metadata.KeyFromPublicKey(&ec.PublicKey))
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	add(metadata.KeyFromPublicKey(&rk.PublicKey))
	for _, typ := range []string{"ed25519-sk", "ecdsa-sk"} {
		for _, vr := range []bool{false, true} {
			sk, err := NewSKKey(keykinds.NewSoftSK(t, typ).PublicKey(), vr)
			if err != nil {
				t.Fatal(err)
			}
			k, _, err := TUFKey(sk)
			add(k, err)
		}
	}
	pgp, _, _ := seedOpenPGP(t)
	k, _, err := TUFKey(pgp)
	add(k, err)
	for _, s := range []string{"", `"`, `\`, `a"b\c`, "<>&", "\x00\x01\n\t\x7f", "\u2028\u2029", "é€𝄞", "\xff", "a\xc3", "\xed\xa0\x80", "\xef\xbf\xbd", "\xf4\x90\x80\x80"} {
		keys = append(keys,
			&metadata.Key{Type: s, Scheme: "ed25519", Value: metadata.KeyVal{PublicKey: "ab"}},
			&metadata.Key{Type: "ed25519", Scheme: s, Value: metadata.KeyVal{PublicKey: s + s}},
		)
	}
	keys = append(keys,
		&metadata.Key{Type: "ed25519", Scheme: "ed25519", Value: metadata.KeyVal{PublicKey: "ab"}, UnrecognizedFields: map[string]any{"x": 1.0}},
		&metadata.Key{Type: "ed25519", Scheme: "ed25519", Value: metadata.KeyVal{PublicKey: "ab", UnrecognizedFields: map[string]any{"private": "y"}}},
	)
	for _, k := range keys {
		got, err := KeyID(k)
		if err != nil {
			t.Fatal(err)
		}
		if want := goTUFID(t, k); got != want {
			t.Errorf("KeyID(%q, %q, %q) = %s, go-tuf says %s", k.Type, k.Scheme, k.Value.PublicKey, got, want)
		}
	}
	// Unknown fields change the ID: the fallback is not just the fast path.
	plain, _ := KeyID(keys[len(keys)-3])
	if withField, _ := KeyID(keys[len(keys)-2]); withField == plain {
		t.Error("an unknown field did not change the key ID")
	}
	if _, err := KeyID(nil); err == nil {
		t.Error("KeyID(nil) did not fail")
	}
}

// FuzzKeyID: KeyID agrees with go-tuf on any three strings.
func FuzzKeyID(f *testing.F) {
	f.Add("ed25519", "ed25519", "0123abcd")
	f.Add("ecdsa", "ecdsa-sha2-nistp256", "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n")
	f.Add(`"\`, "\xff\xfe", "<\u2028>")
	f.Fuzz(func(t *testing.T, typ, scheme, public string) {
		k := &metadata.Key{Type: typ, Scheme: scheme, Value: metadata.KeyVal{PublicKey: public}}
		got, err := KeyID(k)
		if err != nil {
			t.Fatal(err)
		}
		if want := goTUFID(t, k); got != want {
			t.Fatalf("KeyID = %s, go-tuf says %s", got, want)
		}
	})
}
