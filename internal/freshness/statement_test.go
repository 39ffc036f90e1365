package freshness

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testSigner(t testing.TB, name string) ssh.Signer {
	t.Helper()
	seed := sha256.Sum256([]byte("freshness test key " + name))
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testTip() gitrepo.Hash {
	h, _ := gitrepo.ParseHash("0123456789abcdef0123456789abcdef01234567")
	return h
}

func signed(t testing.TB, at time.Time, age time.Duration, signers ...ssh.Signer) []byte {
	t.Helper()
	data, err := Sign(Statement{Tip: testTip(), Time: at, Expires: at.Add(age)}, signers...)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParse: whatever parses re-encodes to its bytes; every deviation from
// the canonical form is refused.
func TestParse(t *testing.T) {
	good := signed(t, t0, time.Hour, testSigner(t, "a"))
	sd, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	if sd.Tip != testTip() || !sd.Time.Equal(t0) || !sd.Expires.Equal(t0.Add(time.Hour)) || len(sd.Signatures) != 1 {
		t.Fatalf("parsed %+v", sd)
	}
	if !bytes.Equal(sd.Encode(), good) {
		t.Error("re-encoding differs")
	}
	payload := string(sd.Payload)
	sig := string(sd.Signatures[0])
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"no signature", payload},
		{"other format", strings.Replace(payload, Format, "git-secure-timestamp/2", 1) + sig},
		{"lines reordered", strings.Replace(payload, "format: "+Format+"\n", "", 1) + "format: " + Format + "\n" + sig},
		{"extra line", payload + "note: x\n" + sig},
		{"zero tip", strings.Replace(payload, testTip().String(), strings.Repeat("0", 40), 1) + sig},
		{"upper-case tip", strings.Replace(payload, testTip().String(), strings.ToUpper(testTip().String()), 1) + sig},
		{"time with offset", strings.Replace(payload, "2026-01-02T03:04:05Z", "2026-01-02T04:04:05+01:00", 1) + sig},
		{"fractional time", strings.Replace(payload, "time: 2026-01-02T03:04:05Z", "time: 2026-01-02T03:04:05.5Z", 1) + sig},
		{"expires before time", strings.Replace(payload, "expires: 2026-01-02T04:04:05Z", "expires: 2026-01-02T03:04:05Z", 1) + sig},
		{"CRLF", strings.ReplaceAll(payload, "\n", "\r\n") + sig},
		{"text after signature", payload + sig + "x\n"},
		{"text between", payload + "\n" + sig},
		{"unterminated signature", payload + strings.TrimSuffix(sig, sigEnd)},
		{"empty signature", payload + sigBegin + sigEnd},
		{"nested marker", payload + sigBegin + sig},
		{"too many signatures", payload + strings.Repeat(sig, MaxSignatures+1)},
		{"too large", payload + sig + strings.Repeat("A", MaxSize)},
	} {
		if _, err := Parse([]byte(tc.data)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", tc.name, err)
		}
	}
}

func testPolicy(t testing.TB, threshold int, keys ...ssh.Signer) *policy.Policy {
	t.Helper()
	base, err := policy.New(testSigner(t, "root").PublicKey(), t0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := base.Clone()
	if err != nil {
		t.Fatal(err)
	}
	var pubs []ssh.PublicKey
	for _, k := range keys {
		pubs = append(pubs, k.PublicKey())
	}
	if err := p.SetFreshness(base, pubs, threshold, 24*time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestVerifySignatures(t *testing.T) {
	a, b, other := testSigner(t, "a"), testSigner(t, "b"), testSigner(t, "root")
	for _, tc := range []struct {
		name    string
		pol     *policy.Policy
		signers []ssh.Signer
		ok      bool
	}{
		{"freshness key", testPolicy(t, 1, a), []ssh.Signer{a}, true},
		{"root key is not a freshness key", testPolicy(t, 1, a), []ssh.Signer{other}, false},
		{"other key ignored, freshness key counts", testPolicy(t, 1, a), []ssh.Signer{other, a}, true},
		{"two keys, either counts", testPolicy(t, 1, a, b), []ssh.Signer{b}, true},
		{"two keys, both sign", testPolicy(t, 1, a, b), []ssh.Signer{b, a}, true},
	} {
		sd, err := Parse(signed(t, t0, time.Hour, tc.signers...))
		if err != nil {
			t.Fatal(err)
		}
		err = VerifySignatures(sd, tc.pol)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, ErrSignature)) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// A statement changed after signing fails.
	data := signed(t, t0, time.Hour, a)
	data = bytes.Replace(data, []byte("0123456789abcdef"), []byte("1123456789abcdef"), 1)
	sd, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifySignatures(sd, testPolicy(t, 1, a)); !errors.Is(err, ErrSignature) {
		t.Errorf("altered statement: %v", err)
	}
}

func TestCheckAge(t *testing.T) {
	f := &policy.Freshness{MaxAge: 24 * time.Hour, Threshold: 1}
	for _, tc := range []struct {
		name    string
		at      time.Time
		expires time.Duration
		now     time.Time
		want    error
	}{
		{"fresh", t0, 24 * time.Hour, t0.Add(time.Hour), nil},
		{"just within", t0, 48 * time.Hour, t0.Add(24 * time.Hour), nil},
		{"older than max age", t0, 48 * time.Hour, t0.Add(25 * time.Hour), ErrStale},
		{"expired before max age", t0, time.Hour, t0.Add(2 * time.Hour), ErrStale},
		{"small skew", t0, time.Hour, t0.Add(-time.Minute), nil},
		{"from the future", t0, time.Hour, t0.Add(-time.Hour), ErrFuture},
	} {
		sd, err := Parse(signed(t, tc.at, tc.expires, testSigner(t, "a")))
		if err != nil {
			t.Fatal(err)
		}
		err = CheckAge(sd, f, tc.now)
		if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}
