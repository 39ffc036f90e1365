package policy

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// A forge app is a root change whose key is of its own and that no other
// lookup knows; forge accounts are a rules change, one person per account
// (case-insensitive), dropped with the person; both survive encoding.
func TestForgeAppsAndAccounts(t *testing.T) {
	root, bob, bridge := newTestKey(t, "root"), newTestKey(t, "bob"), newTestKey(t, "bridge")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	must(t, p.AddPerson(base, "bob", []ssh.PublicKey{bob.Pub}, t0))
	must(t, p.SetForgeAccount(base, "bob", "github", "Bob-GH", t0))
	must(t, p.AddForgeApp(base, "ci-bridge", bridge.Pub, t0))
	if p.Root.Signed.Version != base.Root.Signed.Version+1 || p.Targets.Signed.Version != base.Targets.Signed.Version+1 {
		t.Errorf("versions root %d targets %d: both must move by one", p.Root.Signed.Version, p.Targets.Signed.Version)
	}
	r, tg, err := p.Encode()
	must(t, err)
	q, err := Parse(r, tg)
	must(t, err)
	if !bytes.Contains(r, []byte(`"x-git-secure-forge-apps":{"ci-bridge":"ssh-ed25519 `)) || !bytes.Contains(tg, []byte(`"x-git-secure-forge-accounts":{"bob":{"github":"Bob-GH"}}`)) {
		t.Fatalf("stored form:\n%s\n%s", r, tg)
	}
	if person, ok := q.PersonByForgeAccount("github", "bob-gh"); !ok || person.Name != "bob" {
		t.Errorf("PersonByForgeAccount(github, bob-gh) = %v, %v", person, ok)
	}
	if _, ok := q.PersonByForgeAccount("gitlab", "bob-gh"); ok {
		t.Error("a GitHub account maps a GitLab account")
	}
	if _, ok := q.LookupForgeAppKey(bridge.FP); !ok {
		t.Error("LookupForgeAppKey does not know the bridge")
	}
	for _, fp := range []string{root.FP, bob.FP} {
		if _, ok := q.LookupForgeAppKey(fp); ok {
			t.Errorf("LookupForgeAppKey knows %s", fp)
		}
	}
	if _, ok := q.LookupKey(bridge.FP); ok {
		t.Error("the bridge key is a key entries, approvals or roots are checked against")
	}
	// One account, one person.
	carol := newTestKey(t, "carol")
	must(t, q.AddPerson(base, "carol", []ssh.PublicKey{carol.Pub}, t0))
	if err := q.SetForgeAccount(base, "carol", "github", "BOB-gh", t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "already belongs to bob") {
		t.Errorf("second person for one account: %v", err)
	}
	for _, login := range []string{"bob_gh", "-bob", "", strings.Repeat("b", 40)} {
		if login == "" {
			continue
		}
		if err := q.SetForgeAccount(base, "carol", "github", login, t0); !errors.Is(err, ErrInvalidChange) {
			t.Errorf("GitHub login %q accepted: %v", login, err)
		}
	}
	if err := q.SetForgeAccount(base, "carol", "bitbucket", "carol", t0); !errors.Is(err, ErrInvalidChange) {
		t.Errorf("unknown forge accepted: %v", err)
	}
	// The bridge key must be of its own, and unique.
	if err := q.AddForgeApp(base, "other", bob.Pub, t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "of its own") {
		t.Errorf("a person's key as a bridge: %v", err)
	}
	if err := q.AddForgeApp(base, "ci-bridge", carol.Pub, t0); !errors.Is(err, ErrInvalidChange) {
		t.Errorf("a second app of one name: %v", err)
	}
	// Removing bob drops his account; removing the app drops the field.
	must(t, q.RemovePerson(base, "bob", t0))
	if _, ok := q.PersonByForgeAccount("github", "bob-gh"); ok {
		t.Error("bob's account outlived him")
	}
	must(t, q.RemoveForgeApp(base, "ci-bridge", t0))
	r, tg, err = q.Encode()
	must(t, err)
	if bytes.Contains(r, []byte("forge-apps")) || bytes.Contains(tg, []byte("forge-accounts")) {
		t.Errorf("fields left behind:\n%s\n%s", r, tg)
	}
	if _, err := Parse(r, tg); err != nil {
		t.Fatal(err)
	}
}

// Hostile stored forms are refused when parsed.
func TestForgeFieldsParseRejects(t *testing.T) {
	root, bob, bridge := newTestKey(t, "root"), newTestKey(t, "bob"), newTestKey(t, "bridge")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	must(t, p.AddPerson(base, "bob", []ssh.PublicKey{bob.Pub}, t0))
	must(t, p.SetForgeAccount(base, "bob", "github", "bob-gh", t0))
	must(t, p.AddForgeApp(base, "ci-bridge", bridge.Pub, t0))
	r, tg, err := p.Encode()
	must(t, err)
	bridgeLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(bridge.Pub)))
	bobLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(bob.Pub)))
	rootLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(root.Pub)))
	for _, tc := range []struct {
		name        string
		root, targs []byte
		want        string
	}{
		{"person key as bridge", replaceOnce(t, r, bridgeLine, bobLine), tg, "give the bridge a key of its own"},
		{"root key as bridge", replaceOnce(t, r, bridgeLine, rootLine), tg, "give the bridge a key of its own"},
		{"key with comment", replaceOnce(t, r, bridgeLine, bridgeLine+" me@host"), tg, "canonical SSH public key"},
		{"not a key", replaceOnce(t, r, bridgeLine, "ssh-ed25519 AAAA"), tg, "canonical SSH public key"},
		{"account of nobody", r, replaceOnce(t, tg, `{"bob":{"github"`, `{"eve":{"github"`), "not a person"},
		{"bad login", r, replaceOnce(t, tg, `"bob-gh"`, `"bob gh"`), "not a github account"},
		{"unknown forge", r, replaceOnce(t, tg, `{"github":"bob-gh"}`, `{"gitea":"bob-gh"}`), "unknown forge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.root, tc.targs)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}
