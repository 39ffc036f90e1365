package gpgsign_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gpgsign"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// TestParseFingerprint: only full fingerprints pass, so that no --key
// value becomes a gpg option or a short, collidable key ID.
func TestParseFingerprint(t *testing.T) {
	const fpr = "0123456789ABCDEF0123456789ABCDEF01234567"
	cases := []struct {
		in, want string
		ok       bool
	}{
		{fpr, fpr, true},
		{strings.ToLower(fpr), fpr, true},
		{"0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 4567", fpr, true},
		{strings.Repeat("AB", 32), strings.Repeat("AB", 32), true},
		{"89ABCDEF01234567", "", false}, // long key ID
		{"--homedir=/tmp/x", "", false},
		{fpr + "; rm -rf /", "", false},
		{"alice@example.com", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		got, err := gpgsign.ParseFingerprint(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ParseFingerprint(%q) = %q, %v", c.in, got, err)
		}
		if err != nil && !errors.Is(err, gpgsign.ErrBadFingerprint) {
			t.Errorf("ParseFingerprint(%q): %v is not ErrBadFingerprint", c.in, err)
		}
	}
}

// TestNew: a key gpg has signs (checked by internal/sign); a key it does
// not have is ErrKeyUnavailable; the program named is the one run, with
// an argument vector (a logging wrapper whose path has a space sees each
// argument whole).
func TestNew(t *testing.T) {
	g := keykinds.NewGPG(t, t.TempDir(), "Alice <alice@example.com>", "ed25519")
	t.Setenv("GNUPGHOME", g.Home)
	if _, err := gpgsign.New("gpg", strings.Repeat("AB", 20)); !errors.Is(err, sign.ErrKeyUnavailable) {
		t.Errorf("unknown key: %v, want ErrKeyUnavailable", err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "args.log")
	wrapper := filepath.Join(dir, "my gpg")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '" + log + "'; done\nexec gpg \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := gpgsign.New(wrapper, g.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sign.SignRaw(s, []byte("msg"), sign.NamespaceGit)
	if err != nil {
		t.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(g.ExportPublic())
	if err != nil {
		t.Fatal(err)
	}
	fp := sign.Fingerprint(pub)
	if _, err := sign.VerifyRaw(raw, []byte("msg"), sign.NamespaceGit, func(got string) (ssh.PublicKey, bool) { return pub, got == fp }); err != nil {
		t.Fatal(err)
	}
	args, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--detach-sign\n", "--local-user\n" + g.Fingerprint + "\n", sign.NotationNamespace + "=git\n", sign.NotationKey + "=" + g.Fingerprint + "\n"} {
		if !strings.Contains(string(args), want) {
			t.Errorf("gpg arguments lack %q:\n%s", want, args)
		}
	}
	if _, err := s.SignMessage([]byte("msg"), "git --armor"); err == nil {
		t.Error("a namespace with a space was passed to gpg")
	}
	if _, err := s.Sign(nil, []byte("msg")); !errors.Is(err, sign.ErrUnsupportedKey) {
		t.Errorf("raw SSH signing with an OpenPGP key: %v", err)
	}
}
