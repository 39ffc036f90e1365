package org_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/org"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/git-secure/git-secure/internal/verify"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// orgRepo is an organisation policy repository (a plain git-secure
// repository, root key "admin") with persons alice and bob, and a
// repository that inherits it.
type orgRepo struct {
	t       *testing.T
	s       *testutil.Sandbox
	dir     string // the organisation repository, fetched over file://
	app     string // the inheriting repository
	keys    map[string]testutil.Key
	porc    *porcelain.Repo
	rootFP  string
	orgSpec *policy.Org
}

func newOrgRepo(t *testing.T) *orgRepo {
	s := testutil.NewSandbox(t)
	o := &orgRepo{t: t, s: s, keys: map[string]testutil.Key{}}
	for _, n := range []string{"admin", "alice", "bob", "mallory", "rita"} {
		o.keys[n] = s.NewKey(n, "ed25519")
	}
	o.dir = s.InitRepo("org-policy", 1)
	o.app = s.InitRepo("app", 1)
	g, err := gitrepo.OpenWithEnv(o.dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	o.porc = &porcelain.Repo{Git: g, Now: func() time.Time { return now }, Home: s.Home}
	if _, err := o.porc.Init(o.keys["admin"].Private); err != nil {
		t.Fatal(err)
	}
	o.rootFP = o.fp("admin")
	o.stage(func(p, base *policy.Policy, at time.Time) error {
		return p.AddPersons(base, []policy.NewPerson{{Name: "alice", Keys: []ssh.PublicKey{o.pub("alice")}}, {Name: "bob", Keys: []ssh.PublicKey{o.pub("bob")}}}, at)
	})
	o.orgSpec = &policy.Org{URL: "file://" + o.dir, RootKeys: []string{o.rootFP}, RootThreshold: 1}
	return o
}

func (o *orgRepo) pub(name string) ssh.PublicKey {
	data, err := os.ReadFile(o.keys[name].Public)
	if err != nil {
		o.t.Fatal(err)
	}
	k, _, err := sign.ParsePublicKey(data)
	if err != nil {
		o.t.Fatal(err)
	}
	return k
}

func (o *orgRepo) fp(name string) string { return sign.Fingerprint(o.pub(name)) }

// stage makes one policy change of the organisation and applies it,
// signed by admin.
func (o *orgRepo) stage(edit porcelain.Edit) {
	o.t.Helper()
	if _, err := o.porc.Stage("test", edit); err != nil {
		o.t.Fatal(err)
	}
	if _, _, err := o.porc.Apply(o.keys["admin"].Private); err != nil {
		o.t.Fatal(err)
	}
}

func (o *orgRepo) cache() *org.Cache {
	return &org.Cache{GitDir: filepath.Join(o.app, ".git"), Env: o.s.Environ(), Now: now}
}

func TestPolicyAt(t *testing.T) {
	o := newOrgRepo(t)
	c := o.cache()
	v, err := c.Latest(o.orgSpec)
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	if v.Number < 2 {
		t.Fatalf("latest version %d: the organisation applied a second policy", v.Number)
	}
	p, err := c.PolicyAt(o.orgSpec, v)
	if err != nil {
		t.Fatalf("PolicyAt: %v", err)
	}
	if _, ok := p.Person("bob"); !ok {
		t.Fatal("bob is not in the organisation policy")
	}
	// Version 1 is the first policy: no persons yet.
	first, err := c.PolicyAt(o.orgSpec, firstVersion(t, c, o))
	if err != nil {
		t.Fatalf("PolicyAt(1): %v", err)
	}
	if len(first.Persons()) != 0 {
		t.Fatalf("version 1 has persons %v", first.Persons())
	}

	for _, tc := range []struct {
		name string
		v    rsl.OrgVersion
		want string
	}{
		{"newer than the log", rsl.OrgVersion{Number: v.Number + 5, ID: v.ID}, "is newer than its log's latest policy"},
		{"another id", rsl.OrgVersion{Number: v.Number, ID: mustHash(t, strings.Repeat("ab", 20))}, "its log was rewritten, or this repository names another organisation's"},
		{"not a policy entry", rsl.OrgVersion{Number: 2, ID: v.ID}, "is not a policy entry"},
	} {
		if tc.v.Number == v.Number && tc.name == "not a policy entry" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.PolicyAt(o.orgSpec, tc.v)
			if !errors.Is(err, org.ErrVersion) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PolicyAt(%v) = %v, want %q", tc.v, err, tc.want)
			}
		})
	}
}

func firstVersion(t *testing.T, c *org.Cache, o *orgRepo) rsl.OrgVersion {
	t.Helper()
	g, err := gitrepo.OpenWithEnv(org.Dir(filepath.Join(o.app, ".git"), o.orgSpec), o.s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var first rsl.OrgVersion
	tip, _, err := g.ResolveRef(rsl.Ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := rsl.WalkBack(g, tip, func(r *rsl.Record) (bool, error) {
		first = rsl.OrgVersion{Number: r.Entry.Number, ID: r.ID}
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	return first
}

func mustHash(t *testing.T, s string) gitrepo.Hash {
	h, err := gitrepo.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestOrgPin: an organisation repository whose root is not the pinned
// one is refused, and nothing is kept.
func TestOrgPin(t *testing.T) {
	o := newOrgRepo(t)
	wrong := *o.orgSpec
	wrong.RootKeys = []string{o.fp("mallory")}
	_, err := o.cache().Latest(&wrong)
	if !errors.Is(err, verify.ErrRootPin) || !strings.Contains(err.Error(), "does not verify") {
		t.Fatalf("Latest under another pin = %v, want a root pin failure", err)
	}
	off := o.cache()
	off.Offline = true
	if _, err := off.Latest(&wrong); err == nil || !strings.Contains(err.Error(), "no organisation policy of") {
		t.Fatalf("offline after a refused fetch = %v, want nothing kept", err)
	}
}

// TestOrgRollback: once a repository saw a newer organisation policy, a
// server put back to an older snapshot is detected and refused.
func TestOrgRollback(t *testing.T) {
	o := newOrgRepo(t)
	oldRSL := o.s.Git(o.dir, "rev-parse", "refs/secure/rsl")
	oldPolicy := o.s.Git(o.dir, "rev-parse", "refs/secure/policy")
	if _, err := o.cache().Latest(o.orgSpec); err != nil {
		t.Fatal(err)
	}
	// bob leaves the organisation.
	o.stage(func(p, base *policy.Policy, at time.Time) error { return p.RemovePerson(base, "bob", at) })
	c := o.cache()
	v, err := c.Latest(o.orgSpec)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.PolicyAt(o.orgSpec, v)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Person("bob"); ok {
		t.Fatal("bob is still in the latest organisation policy")
	}
	// The organisation's server is put back to the snapshot with bob.
	o.s.Git(o.dir, "update-ref", "refs/secure/rsl", oldRSL)
	o.s.Git(o.dir, "update-ref", "refs/secure/policy", oldPolicy)
	_, err = o.cache().Latest(o.orgSpec)
	if !errors.Is(err, org.ErrRollback) || !strings.Contains(err.Error(), "does not contain the one this repository verified before") {
		t.Fatalf("Latest after a rollback = %v, want ErrRollback", err)
	}
	// What was kept is the newer policy, not the rolled-back one.
	off := o.cache()
	off.Offline = true
	if got, err := off.Latest(o.orgSpec); err != nil || got != v {
		t.Fatalf("offline Latest = %v, %v; want %v", got, err, v)
	}
}

// TestKept: a Kept cache reads the organisation policy as last verified,
// without fetching (the organisation's newer version stays unseen), until
// a version newer than the kept one is needed: then it fetches it.
func TestKept(t *testing.T) {
	o := newOrgRepo(t)
	old, err := o.cache().Latest(o.orgSpec) // fetched, verified, kept
	if err != nil {
		t.Fatal(err)
	}
	o.stage(func(p, base *policy.Policy, at time.Time) error { return p.RemovePerson(base, "bob", at) })
	fresh, err := o.cache().Latest(o.orgSpec)
	if err != nil || fresh.Number <= old.Number {
		t.Fatalf("a fetching cache sees version %v (%v), want newer than %d", fresh, err, old.Number)
	}
	o.stage(func(p, base *policy.Policy, at time.Time) error { return p.RemovePerson(base, "alice", at) })

	c := o.cache()
	c.Kept = true
	if v, err := c.Latest(o.orgSpec); err != nil || v != fresh {
		t.Fatalf("a Kept cache's latest = %v (%v), want the kept %v", v, err, fresh)
	}
	next := rsl.OrgVersion{Number: fresh.Number + 1}
	if err := c.Need(o.orgSpec, next); err != nil {
		t.Fatalf("Need of a newer version: %v", err)
	}
	v, err := c.Latest(o.orgSpec)
	if err != nil || v.Number <= fresh.Number {
		t.Fatalf("after Need, latest = %v (%v), want newer than %d", v, err, fresh.Number)
	}
	p, err := c.PolicyAt(o.orgSpec, v)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Person("alice"); ok {
		t.Fatal("the fetched version still lists alice")
	}
}

// TestFetchedOncePerCache: a Cache fetches an organisation once, whatever
// it is asked and however often, also when the fetched policy fails to
// verify (a server's pre-receive hook asks up to three times per push;
// each ask fetched again after a failure). git's own trace (trace2 in the
// global configuration, which the cache's git processes read) counts the
// fetches.
func TestFetchedOncePerCache(t *testing.T) {
	o := newOrgRepo(t)
	trace := filepath.Join(o.s.Home, "trace2.txt")
	o.s.Git(o.app, "config", "--global", "trace2.normalTarget", trace)
	fetches := func() int {
		t.Helper()
		data, err := os.ReadFile(trace)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.Remove(trace); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, " start ") && strings.Contains(line, " fetch --quiet --prune --no-tags ") {
				n++
			}
		}
		return n
	}
	fetches()
	c := o.cache()
	v, err := c.Latest(o.orgSpec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PolicyAt(o.orgSpec, v); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Latest(o.orgSpec); err != nil {
		t.Fatal(err)
	}
	if n := fetches(); n != 1 {
		t.Fatalf("Latest, PolicyAt, Latest fetched %d times, want 1", n)
	}
	wrong := *o.orgSpec
	wrong.RootKeys = []string{o.fp("mallory")}
	c = o.cache()
	for i := range 3 {
		if _, err := c.Latest(&wrong); !errors.Is(err, verify.ErrRootPin) {
			t.Fatalf("ask %d under another pin = %v, want a root pin failure", i, err)
		}
	}
	if n := fetches(); n != 1 {
		t.Fatalf("three asks of an organisation that fails to verify fetched %d times, want 1", n)
	}
}
