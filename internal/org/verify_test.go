package org_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/org"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// app is a repository (root key rita) that inherits o's organisation
// policy; entries are written by hand, as any client could.
type app struct {
	o    *orgRepo
	g    *gitrepo.Repo
	porc *porcelain.Repo
	head gitrepo.Hash
	n    int
}

func newApp(t *testing.T, o *orgRepo) *app {
	g, err := gitrepo.OpenWithEnv(o.app, o.s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	a := &app{o: o, g: g, porc: &porcelain.Repo{Git: g, Now: func() time.Time { return now }, Home: o.s.Home}}
	if _, err := a.porc.Init(o.keys["rita"].Private); err != nil {
		t.Fatal(err)
	}
	if _, err := a.porc.Stage("inherit", func(p, base *policy.Policy, at time.Time) error { return p.SetOrg(base, *o.orgSpec, at) }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.porc.Apply(o.keys["rita"].Private); err != nil {
		t.Fatal(err)
	}
	a.head = mustHash(t, o.s.Git(o.app, "rev-parse", "HEAD"))
	return a
}

// record appends an entry creating a new branch at HEAD, signed by key,
// naming organisation version v (nil: none), and returns its number.
func (a *app) record(t *testing.T, key string, v *rsl.OrgVersion) uint64 {
	t.Helper()
	tip, _, err := a.g.ResolveRef(rsl.Ref)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a.g.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	last, err := rsl.FromCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	a.n++
	ref := "refs/heads/b" + strings.Repeat("x", a.n)
	e := &rsl.Entry{Number: last.Number + 1, Type: rsl.TypeRef, Ref: ref, New: a.head, Org: v}
	s, err := a.porc.LoadSigner(a.o.keys[key].Private)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	who := gitrepo.Ident{Name: key, Email: key + "@example.com", When: now}
	id, err := rsl.Write(a.g, e, tip, who, func(p []byte) ([]byte, error) { return sign.SignSSHSig(s, p, sign.NamespaceGit) })
	if err != nil {
		t.Fatal(err)
	}
	a.o.s.Git(a.o.app, "update-ref", rsl.Ref, id.String())
	a.o.s.Git(a.o.app, "update-ref", ref, a.head.String())
	return e.Number
}

func (a *app) verify(src verify.OrgSource, currentFrom uint64) error {
	_, err := verify.Verify(a.g, verify.Options{Now: now, LocalAhead: true, IgnoreMissingRefs: true, Org: src, OrgCurrentFrom: currentFrom})
	return err
}

// TestVerifyOrgVersions: each entry of an inheriting repository is judged
// by the organisation policy version it names, which must exist, never go
// back, and (for a push) be the latest.
func TestVerifyOrgVersions(t *testing.T) {
	o := newOrgRepo(t)
	a := newApp(t, o)
	c := o.cache()
	v1, err := c.Latest(o.orgSpec)
	if err != nil {
		t.Fatal(err)
	}
	// bob, a person of the organisation only, records under v1.
	a.record(t, "bob", &v1)
	if err := a.verify(o.cache(), 0); err != nil {
		t.Fatalf("bob's entry under the organisation policy: %v", err)
	}
	base := o.s.Git(o.app, "rev-parse", rsl.Ref)

	// The organisation removes bob: v2.
	o.stage(func(p, b *policy.Policy, at time.Time) error { return p.RemovePerson(b, "bob", at) })
	v2, err := o.cache().Latest(o.orgSpec)
	if err != nil || v2.Number <= v1.Number {
		t.Fatalf("latest after bob's removal: %v, %v", v2, err)
	}
	other := rsl.OrgVersion{Number: v2.Number + 10, ID: v2.ID}
	for _, tc := range []struct {
		name        string
		key         string
		v           *rsl.OrgVersion
		src         bool
		currentFrom bool
		kind        error
		want        string
	}{
		{"history stays valid", "alice", &v1, true, false, nil, ""},
		{"latest", "alice", &v2, true, true, nil, ""},
		{"bob under v2", "bob", &v2, true, false, verify.ErrSignature, "a key the policy in force does not know"},
		{"push naming an old version", "alice", &v1, true, true, verify.ErrOrgPolicy, "a new entry must name the organisation's latest policy version: the organisation's latest policy is version"},
		{"no version", "alice", nil, true, false, verify.ErrOrgPolicy, "the entry names no version of it"},
		{"a version that does not exist", "alice", &other, true, false, verify.ErrOrgPolicy, "is newer than its log's latest policy"},
		{"without an organisation source", "alice", &v2, false, false, verify.ErrOrgPolicy, "which this verification cannot read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o.s.Git(o.app, "update-ref", rsl.Ref, base)
			n := a.record(t, tc.key, tc.v)
			var src verify.OrgSource
			if tc.src {
				src = o.cache()
			}
			var from uint64
			if tc.currentFrom {
				from = n
			}
			err := a.verify(src, from)
			if tc.kind == nil {
				if err != nil {
					t.Fatalf("verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify = %v, want %v naming %q", err, tc.kind, tc.want)
			}
		})
	}

	// An entry may not go back to an older version than one named before.
	o.s.Git(o.app, "update-ref", rsl.Ref, base)
	a.record(t, "alice", &v2)
	a.record(t, "bob", &v1)
	if err := a.verify(o.cache(), 0); !errors.Is(err, verify.ErrOrgPolicy) || !strings.Contains(err.Error(), "older than or other than version") {
		t.Fatalf("an entry going back to version %d: %v", v1.Number, err)
	}
}

// TestVerifyOrgFieldWithoutOrg: a repository that inherits nothing
// refuses an entry naming an organisation version.
func TestVerifyOrgFieldWithoutOrg(t *testing.T) {
	o := newOrgRepo(t)
	g, err := gitrepo.OpenWithEnv(o.app, o.s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	a := &app{o: o, g: g, porc: &porcelain.Repo{Git: g, Now: func() time.Time { return now }, Home: o.s.Home}}
	if _, err := a.porc.Init(o.keys["rita"].Private); err != nil {
		t.Fatal(err)
	}
	a.head = mustHash(t, o.s.Git(o.app, "rev-parse", "HEAD"))
	v := rsl.OrgVersion{Number: 3, ID: a.head}
	a.record(t, "rita", &v)
	if err := a.verify(&org.Cache{}, 0); !errors.Is(err, verify.ErrOrgPolicy) || !strings.Contains(err.Error(), "but the policy in force inherits none") {
		t.Fatalf("verify = %v", err)
	}
}
