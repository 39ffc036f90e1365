package policy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"
)

// TestFreshnessSetRemove: set-freshness is a root change (version bump,
// signatures dropped), survives encoding, and its key vouches for
// freshness only: it is not a key entries or roots are checked against.
// Removing it gives back a root without the role and the field.
func TestFreshnessSetRemove(t *testing.T) {
	root, ts := newTestKey(t, "root"), newTestKey(t, "timestamp")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	must(t, p.SetFreshness(base, []ssh.PublicKey{ts.Pub}, 1, 24*time.Hour, t0))
	if p.Root.Signed.Version != base.Root.Signed.Version+1 {
		t.Errorf("root version %d, want %d", p.Root.Signed.Version, base.Root.Signed.Version+1)
	}
	r, tg, err := p.Encode()
	must(t, err)
	q, err := Parse(r, tg)
	must(t, err)
	f := q.Freshness()
	if f == nil || f.MaxAge != 24*time.Hour || f.Threshold != 1 || len(f.Keys) != 1 || f.Keys[0].Fingerprint != ts.FP {
		t.Fatalf("Freshness() = %+v", f)
	}
	if !bytes.Contains(r, []byte(`"x-git-secure-timestamp-max-age":"86400"`)) {
		t.Errorf("root.json lacks the max age as a decimal string:\n%s", r)
	}
	if _, ok := q.LookupKey(ts.FP); ok {
		t.Error("the freshness key is a key entries are checked against")
	}
	if keys, _ := q.RoleKeys(metadata.ROOT); len(keys) != 1 || keys[0].Fingerprint != root.FP {
		t.Errorf("root keys %v", keys)
	}
	if _, ok := q.LookupFreshnessKey(ts.FP); !ok {
		t.Error("LookupFreshnessKey does not know the freshness key")
	}
	if _, ok := q.LookupFreshnessKey(root.FP); ok {
		t.Error("LookupFreshnessKey knows the root key")
	}
	must(t, q.RemoveFreshness(base, t0))
	if q.Freshness() != nil || len(q.Root.Signed.Keys) != 1 || len(q.Root.Signed.Roles) != 2 {
		t.Errorf("after RemoveFreshness: roles %v keys %d", q.Root.Signed.Roles, len(q.Root.Signed.Keys))
	}
	if err := q.RemoveFreshness(base, t0); !errors.Is(err, ErrInvalidChange) {
		t.Errorf("removing an absent setting: %v", err)
	}
}

func TestFreshnessSetRefused(t *testing.T) {
	root, ts := newTestKey(t, "root"), newTestKey(t, "timestamp")
	base, err := New(root.Pub, t0)
	must(t, err)
	for _, tc := range []struct {
		name string
		keys []ssh.PublicKey
		n    int
		age  time.Duration
	}{
		{"no key", nil, 1, time.Hour},
		{"threshold 0", []ssh.PublicKey{ts.Pub}, 0, time.Hour},
		{"threshold above keys", []ssh.PublicKey{ts.Pub}, 2, time.Hour},
		{"same key twice", []ssh.PublicKey{ts.Pub, ts.Pub}, 1, time.Hour},
		{"too short", []ssh.PublicKey{ts.Pub}, 1, time.Second},
		{"too long", []ssh.PublicKey{ts.Pub}, 1, 400 * 24 * time.Hour},
		{"fractional seconds", []ssh.PublicKey{ts.Pub}, 1, time.Hour + time.Millisecond},
		{"the root key", []ssh.PublicKey{root.Pub}, 1, time.Hour},
	} {
		p, err := base.Clone()
		must(t, err)
		if err := p.SetFreshness(base, tc.keys, tc.n, tc.age, t0); !errors.Is(err, ErrInvalidChange) {
			t.Errorf("%s: %v, want ErrInvalidChange", tc.name, err)
		}
	}
}

// TestFreshnessMalformed: the role and the max age come together, the
// max age is canonical decimal seconds within bounds, and no other field
// may appear in root.json.
func TestFreshnessMalformed(t *testing.T) {
	root, ts := newTestKey(t, "root"), newTestKey(t, "timestamp")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	must(t, p.SetFreshness(base, []ssh.PublicKey{ts.Pub}, 1, time.Hour, t0))
	r, tg, err := p.Encode()
	must(t, err)
	for _, tc := range []struct{ name, from, to string }{
		{"age without role", `"timestamp":{`, `"timestampx":{`},
		{"role without age", `,"x-git-secure-timestamp-max-age":"3600"`, ``},
		{"age not canonical", `"3600"`, `"03600"`},
		{"age not a number", `"3600"`, `"1h"`},
		{"age too small", `"3600"`, `"1"`},
		{"unknown field", `"x-git-secure-timestamp-max-age"`, `"x-git-secure-timestamp-max-agf"`},
	} {
		bad := strings.Replace(string(r), tc.from, tc.to, 1)
		if bad == string(r) {
			t.Fatalf("%s: %q not found in %s", tc.name, tc.from, r)
		}
		if _, err := Parse([]byte(bad), tg); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", tc.name, err)
		}
	}
}

// TestFreshnessOldPoliciesUnchanged: a policy without the setting keeps
// its bytes (the golden files were written before freshness existed).
func TestFreshnessOldPoliciesUnchanged(t *testing.T) {
	r, err := os.ReadFile(filepath.Join("testdata", "golden-root.json"))
	must(t, err)
	tg, err := os.ReadFile(filepath.Join("testdata", "golden-targets.json"))
	must(t, err)
	p, err := Parse(r, tg)
	must(t, err)
	if p.Freshness() != nil {
		t.Error("an old policy reads as setting freshness")
	}
	r2, _, err := p.Encode()
	must(t, err)
	if !bytes.Equal(r, r2) {
		t.Error("an old root.json does not re-encode to its bytes")
	}
}

// TestFreshnessKeyOfItsOwn: whatever path makes the freshness key also a
// root, rules or person's key (an edit after set-freshness, or a policy
// written by hand) is refused when the policy is parsed, as Load and
// verify do: an online key must not gain the power to sign entries,
// rules or roots. A threshold above 1 is refused the same way.
func TestFreshnessKeyOfItsOwn(t *testing.T) {
	root, ts := newTestKey(t, "root"), newTestKey(t, "timestamp")
	base, err := New(root.Pub, t0)
	must(t, err)
	fresh, err := base.Clone()
	must(t, err)
	must(t, fresh.SetFreshness(base, []ssh.PublicKey{ts.Pub}, 1, time.Hour, t0))
	for _, tc := range []struct {
		name string
		edit func(p *Policy) error
		want string
	}{
		{"person", func(p *Policy) error { return p.AddPerson(fresh, "bot", []ssh.PublicKey{ts.Pub}, t0) }, "also a person's key"},
		{"root", func(p *Policy) error { return p.AddRoleKey(fresh, metadata.ROOT, ts.Pub, t0) }, "also a root key"},
		{"targets", func(p *Policy) error { return p.AddRoleKey(fresh, metadata.TARGETS, ts.Pub, t0) }, "also a rules (targets) key"},
	} {
		p, err := fresh.Clone()
		must(t, err)
		if err := tc.edit(p); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	two := newTestKey(t, "timestamp2")
	p, err := base.Clone()
	must(t, err)
	if err := p.SetFreshness(base, []ssh.PublicKey{ts.Pub, two.Pub}, 2, time.Hour, t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "above 1 is not supported") {
		t.Errorf("threshold 2: %v", err)
	}
	must(t, p.SetFreshness(base, []ssh.PublicKey{ts.Pub, two.Pub}, 1, time.Hour, t0))
	r, tg, err := p.Encode()
	must(t, err)
	at := strings.Index(string(r), `"timestamp":{`)
	bad := string(r[:at]) + strings.Replace(string(r[at:]), `"threshold":1}`, `"threshold":2}`, 1)
	if _, err := Parse([]byte(bad), tg); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "above 1") {
		t.Errorf("a root.json with freshness threshold 2: %v", err)
	}
}
