package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIRefusedKeysSayWhy: every command that takes a key (policy
// add-person --key, trust add-root-key, the signing key of rsl record from
// --key or user.signingkey) refuses a DSA key and a 1024-bit RSA key by
// saying what is wrong with it, not that it is not an SSH public key.
func TestCLIRefusedKeysSayWhy(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	d := h.S.NewDSAKey("old-dsa")
	rsa := filepath.Join(h.S.Home, "rsa1024")
	h.S.Run(h.S.Home, "ssh-keygen", "-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", rsa)
	const (
		dsaWhy = "DSA keys (ssh-dss) are not accepted: use ed25519"
		rsaWhy = "RSA key of 1024 bits is too short: at least 2048 bits"
	)
	for _, tc := range []struct {
		args []string
		why  string
	}{
		{[]string{"policy", "add-person", "dave", "--key", d.Public}, dsaWhy},
		{[]string{"policy", "add-person", "dave", "--key", d.Private}, dsaWhy},
		{[]string{"policy", "add-person", "dave", "--key", d.PEM}, dsaWhy},
		{[]string{"policy", "add-person", "dave", "--key", rsa + ".pub"}, rsaWhy},
		{[]string{"policy", "add-person", "dave", "--key", rsa}, rsaWhy},
		{[]string{"trust", "add-root-key", d.Public}, dsaWhy},
		{[]string{"trust", "add-root-key", rsa + ".pub"}, rsaWhy},
		{[]string{"rsl", "record", "main", "--key", d.Private}, dsaWhy},
		{[]string{"rsl", "record", "main", "--key", rsa}, rsaWhy},
	} {
		r := h.Run(tc.args...)
		if r.Code == 0 || !strings.Contains(r.Stderr, tc.why) || strings.Contains(r.Stderr, "is not an SSH public key") {
			t.Errorf("want a failure saying %q:\n%s", tc.why, r)
		}
	}

	h.Git("config", "gpg.format", "ssh")
	for _, tc := range []struct{ signingKey, why string }{
		{d.Private, dsaWhy},
		{"key::" + strings.TrimSpace(h.S.Run(h.S.Home, "cat", d.Public)), dsaWhy},
		{rsa, rsaWhy},
	} {
		h.Git("config", "user.signingkey", tc.signingKey)
		r := h.Run("rsl", "record", "main")
		if r.Code == 0 || !strings.Contains(r.Stderr, tc.why) {
			t.Errorf("user.signingkey %s: want a failure saying %q:\n%s", tc.signingKey, tc.why, r)
		}
	}
}
