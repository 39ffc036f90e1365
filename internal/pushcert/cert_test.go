package pushcert

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/sign"
)

// testdata/signed.cert was written by git 2.39 (git push --signed -o
// ci.skip, gpg.format=ssh, key testdata/alice) to a server with
// receive.certNonceSeed set: the exact bytes git stores for a hook.

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func testKey(t testing.TB, name string) ssh.PublicKey {
	t.Helper()
	pub, _, _, _, err := ssh.ParseAuthorizedKey(readTestdata(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return pub
}

func lookupOf(keys ...ssh.PublicKey) func(string) (ssh.PublicKey, bool) {
	return func(fp string) (ssh.PublicKey, bool) {
		for _, k := range keys {
			if sign.Fingerprint(k) == fp {
				return k, true
			}
		}
		return nil, false
	}
}

func TestParseGitCertificate(t *testing.T) {
	raw := readTestdata(t, "signed.cert")
	c, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	alice := testKey(t, "alice.pub")
	if c.Pusher != sign.Fingerprint(alice) || c.PushTime != 1796470544 || c.TZ != "+0000" {
		t.Errorf("pusher %q %d %q", c.Pusher, c.PushTime, c.TZ)
	}
	if c.Pushee != "file:///tmp/pcg/srv.git" || c.Nonce != "1796470544-0d6436e8088d342c6b98e38adec58c9a8fba7740" {
		t.Errorf("pushee %q nonce %q", c.Pushee, c.Nonce)
	}
	if len(c.Options) != 1 || c.Options[0] != "ci.skip" {
		t.Errorf("options %q", c.Options)
	}
	want := []Update{
		{Ref: "refs/heads/main", New: mustHash(t, "57ef6b409b72f867c799347c562551b1a76536d6")},
		{Ref: "refs/tags/v1", New: mustHash(t, "57ef6b409b72f867c799347c562551b1a76536d6")},
	}
	if len(c.Updates) != len(want) || c.Updates[0] != want[0] || c.Updates[1] != want[1] {
		t.Errorf("updates %+v", c.Updates)
	}
	if !bytes.Equal(c.Encode(), raw) {
		t.Errorf("Encode differs from what git wrote")
	}
	if err := c.CheckSession(); err != nil {
		t.Errorf("CheckSession: %v", err)
	}
	if _, err := c.Verify(lookupOf(alice)); err != nil {
		t.Errorf("Verify with alice's key: %v", err)
	}
	if _, err := c.Verify(lookupOf(testKey(t, "other.pub"))); !errors.Is(err, sign.ErrUnknownKey) {
		t.Errorf("Verify with another key: %v, want ErrUnknownKey", err)
	}
	// The payload Verify checks is the one ssh-keygen checks: the
	// signature is git's own (oracle).
	dir := t.TempDir()
	sig := filepath.Join(dir, "sig")
	if err := os.WriteFile(sig, c.Signature, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "check-novalidate", "-n", "git", "-s", sig)
	cmd.Stdin = bytes.NewReader(c.Payload)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y check-novalidate of the payload: %v\n%s", err, out)
	}
}

func mustHash(t testing.TB, s string) gitrepo.Hash {
	h, err := gitrepo.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestVerifyRefusesAlteredCertificates: a changed update, pushee, nonce
// or pusher line no longer verifies.
func TestVerifyRefusesAlteredCertificates(t *testing.T) {
	raw := string(readTestdata(t, "signed.cert"))
	alice := testKey(t, "alice.pub")
	for _, tc := range []struct{ name, old, new, want string }{
		{"update", "57ef6b409b72f867c799347c562551b1a76536d6 refs/heads/main", "57ef6b409b72f867c799347c562551b1a76536d7 refs/heads/main", "signature does not verify"},
		{"pushee", "pushee file:///tmp/pcg/srv.git", "pushee file:///tmp/pcg/other.git", "signature does not verify"},
		{"nonce", "nonce 1796470544-0d6436e8", "nonce 1796470544-1d6436e8", "signature does not verify"},
		{"pusher", "pusher SHA256:5B5cvi9dEYnYrX9smGjb4k93lga5QfLu9w+gRXxmKho", "pusher SHA256:AAAAvi9dEYnYrX9smGjb4k93lga5QfLu9w+gRXxmKho", "signature does not verify"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(strings.Replace(raw, tc.old, tc.new, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Verify(lookupOf(alice)); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestParseRefuses: every departure from git's format is refused, naming
// what is wrong.
func TestParseRefuses(t *testing.T) {
	raw := string(readTestdata(t, "signed.cert"))
	sig := raw[strings.Index(raw, sigBegin):]
	head := "certificate version 0.1\npusher SHA256:x  1 +0000\npushee u\nnonce 1-" + strings.Repeat("a", 40) + "\n\n"
	upd := strings.Repeat("0", 40) + " " + strings.Repeat("ab", 20) + " refs/heads/main\n"
	for _, tc := range []struct{ name, in, want string }{
		{"ok", head + upd + sig, ""},
		{"too big", head + upd + strings.Repeat("x", MaxSize) + sig, "more than 65536"},
		{"no signature", head + upd, "no SSH or OpenPGP signature"},
		{"openpgp parses", head + upd + "-----BEGIN PGP SIGNATURE-----\n\nx\n-----END PGP SIGNATURE-----\n", ""},
		{"text after signature", head + upd + sig + "x\n", "does not end the certificate"},
		{"two signatures", head + upd + sig + sig, "inside the signature block"},
		{"version", strings.Replace(head, "0.1", "0.2", 1) + upd + sig, "want \"certificate version 0.1\""},
		{"no pusher", strings.Replace(head, "pusher", "pushr", 1) + upd + sig, "no pusher line"},
		{"pusher time", strings.Replace(head, " 1 +0000", " 01 +0000", 1) + upd + sig, "pusher time"},
		{"pusher zone", strings.Replace(head, "+0000", "+00", 1) + upd + sig, "pusher time zone"},
		{"header order", strings.Replace(head, "pushee u\n", "", 1) + upd + sig, ""},
		{"header order", strings.Replace(strings.Replace(head, "pushee u\n", "", 1), "\n\n", "\npushee u\n\n", 1) + upd + sig, "unexpected header line \"pushee u\""},
		{"no updates", head + sig, "no ref update"},
		{"upper hex", head + strings.ToUpper(upd) + sig, "not 40 lowercase hex"},
		{"short ref", head + strings.Replace(upd, "refs/heads/main", "main", 1) + sig, "not a full ref name"},
		{"bad ref", head + strings.Replace(upd, "refs/heads/main", "refs/heads/a..b", 1) + sig, "not a full ref name"},
		{"twice", head + upd + upd + sig, "updated twice"},
		{"control", strings.Replace(head, "pushee u", "pushee u\x1b[2J", 1) + upd + sig, "control character"},
		{"crlf", strings.Replace(head, "pushee u\n", "pushee u\r\n", 1) + upd + sig, "control character"},
		{"no final newline", head + strings.TrimSuffix(upd, "\n") + sig, "signature does not start a line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want ErrMalformed with %q", err, tc.want)
			}
		})
	}
}

func TestCheckSession(t *testing.T) {
	c, err := Parse(readTestdata(t, "signed.cert"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Cert)
		want   string
	}{
		{"no pushee", func(c *Cert) { c.Pushee = "" }, "no pushee"},
		{"no nonce", func(c *Cert) { c.Nonce = "" }, "receive.certNonceSeed unset"},
		{"nonce form", func(c *Cert) { c.Nonce = "1796470544-xyz" }, "is not git's"},
		{"nonce long ago", func(c *Cert) { c.Nonce = "1000-" + strings.Repeat("a", 40) }, "more than a day apart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := *c
			tc.change(&x)
			if err := x.CheckSession(); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckSession: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCheckEntry(t *testing.T) {
	c, err := Parse(readTestdata(t, "signed.cert"))
	if err != nil {
		t.Fatal(err)
	}
	newMain := c.Updates[0].New
	// The test certificate moves no log: add one as a push through
	// git-remote-secure would.
	withLog := *c
	withLog.Updates = append(append([]Update(nil), c.Updates...), Update{Ref: "refs/secure/rsl", New: newMain})
	for _, tc := range []struct {
		name     string
		c        *Cert
		ref      string
		old, new gitrepo.Hash
		want     string
	}{
		{"ok", &withLog, "refs/heads/main", gitrepo.ZeroHash, newMain, ""},
		{"other ref", &withLog, "refs/heads/dev", gitrepo.ZeroHash, newMain, "it updates refs/heads/main, refs/tags/v1, refs/secure/rsl, not refs/heads/dev"},
		{"other update", &withLog, "refs/heads/main", newMain, gitrepo.ZeroHash, "it states refs/heads/main (none)..57ef6b409b72, the entry 57ef6b409b72..(none)"},
		{"log not moved", c, "refs/heads/main", gitrepo.ZeroHash, newMain, "does not move refs/secure/rsl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.c.CheckEntry("refs/secure/rsl", tc.ref, tc.old, tc.new)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckEntry: %v, want %q", err, tc.want)
			}
		})
	}
}
