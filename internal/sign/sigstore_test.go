package sign

import (
	"strings"
	"testing"
)

// TestParseSigstoreIdentity: "sigstore-oidc ISSUER SUBJECT" is parsed
// strictly; the TUF form converts back to the same identity.
func TestParseSigstoreIdentity(t *testing.T) {
	for _, tc := range []struct{ line, err string }{
		{"sigstore-oidc https://accounts.google.com kim@example.com", ""},
		{"sigstore-oidc https://token.actions.githubusercontent.com https://github.com/o/r/.github/workflows/r.yml@refs/heads/main", ""},
		{"sigstore-oidc http://accounts.google.com kim@example.com", "is not an https URL"},
		{"sigstore-oidc https://accounts.google.com kim", "neither an email address nor a URI"},
		{"sigstore-oidc https://accounts.google.com", "ISSUER SUBJECT"},
		{"sigstore-oidc https://accounts.google.com kim@example.com extra", "ISSUER SUBJECT"},
		{"sigstore-oidc https://accounts.google.com " + strings.Repeat("k", 300) + "@example.com", "printable ASCII"},
		{"sigstore-oidc https://accounts.google.com kim\x7f@example.com", "printable ASCII"},
	} {
		pub, _, err := ParsePublicKey([]byte(tc.line))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if DescribeKey(pub) != tc.line {
			t.Errorf("described as %q", DescribeKey(pub))
		}
		k, _, err := TUFKey(pub)
		if err != nil {
			t.Fatal(err)
		}
		back, err := PublicKeyFromTUF(k)
		if err != nil || Fingerprint(back) != Fingerprint(pub) {
			t.Fatalf("TUF round trip: %v", err)
		}
		if IsTUFNative(k) {
			t.Error("a keyless identity counted as a go-tuf key")
		}
	}
}
