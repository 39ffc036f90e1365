package verify_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/verify"
)

// WorkingClone clones the fixture's repository as a CI job does (plain
// git clone, then git fetch origin 'refs/secure/*:refs/secure/*') and
// returns a fixture on the clone, whose repository is the clone's "origin".
func (f *ScenarioFixture) WorkingClone() *ScenarioFixture {
	f.T.Helper()
	dst := filepath.Join(f.T.TempDir(), "clone")
	f.S.Git(f.Dir, "clone", "-q", f.Dir, dst)
	f.S.Git(dst, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
	g, err := gitrepo.OpenWithEnv(dst, f.S.Environ())
	if err != nil {
		f.T.Fatal(err)
	}
	f.T.Cleanup(func() { g.Close() })
	c := *f
	c.Dir, c.G = dst, g
	c.R = &porcelain.Repo{Git: g, Now: f.R.Now, Home: f.S.Home}
	return &c
}

// CloneOpts returns the options git secure verify uses in a working
// clone judging remote (read afresh: tests change the config with git).
func (f *ScenarioFixture) CloneOpts(remote string) verify.Options {
	f.T.Helper()
	g, err := gitrepo.OpenWithEnv(f.Dir, f.S.Environ())
	if err != nil {
		f.T.Fatal(err)
	}
	defer g.Close()
	st, err := verify.LoadCloneState(g, remote)
	if err != nil {
		f.T.Fatalf("clone state of %s: %v", remote, err)
	}
	return verify.Options{Clone: st}
}

// localState returns the clone's reported local state of ref ("" if none).
func localState(res *verify.Result, ref string) string {
	for _, l := range res.Local {
		if l.Ref == ref {
			return l.State
		}
	}
	return ""
}

// refNote returns the note of ref's judged status.
func refNote(res *verify.Result, ref string) (string, bool) {
	for _, s := range res.Refs {
		if s.Ref == ref {
			return s.Note, true
		}
	}
	return "", false
}

// noRecordHint fails if any problem's hint suggests recording: a clone
// cannot fix a remote's state, and recording a rollback makes it look
// intended.
func noRecordHint(t *testing.T, failed *verify.Failed) {
	t.Helper()
	for _, p := range failed.Problems {
		if strings.Contains(p.Hint, "rsl record") {
			t.Errorf("problem %v: hint %q suggests recording", p, p.Hint)
		}
	}
}

// TestCloneJudgesRemote: in a working clone, what the remote served is
// judged as strictly as a server's refs. Each attack is the remote's
// state, seen through a plain git clone or fetch.
func TestCloneJudgesRemote(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)

	t.Run("server main moved without an entry, fresh plain clone", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		srv.CommitMain("pushed past git-secure")
		c := srv.WorkingClone()
		res, err := c.Verify(c.CloneOpts("origin"))
		p, failed := ScenarioWantProblem(t, err, verify.ErrUnrecorded, "refs/heads/main", "on origin (refs/remotes/origin/main)", "without an entry")
		noRecordHint(t, failed)
		if !strings.Contains(p.Hint, "origin moved refs/heads/main") {
			t.Errorf("hint %q; want it to say the remote moved main", p.Hint)
		}
		if res == nil || res.Judged != "remote origin" {
			t.Errorf("judged = %+v; want remote origin", res)
		}
	})

	t.Run("server main rolled back, clone fetched it", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		a := srv.Ref("refs/heads/main")
		c := srv.WorkingClone()
		b := srv.CommitMain("newer")
		srv.Approve("bob", "main", b, "")
		srv.Record("alice", "main")
		c.S.Git(c.Dir, "fetch", "-q", "origin")
		c.S.Git(c.Dir, "fetch", "-q", "origin", "refs/secure/*:refs/secure/*")
		c.MustVerify(c.CloneOpts("origin"))
		srv.SetRef("refs/heads/main", a)
		c.S.Git(c.Dir, "fetch", "-q", "origin")
		_, failed := c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, "refs/heads/main", "on origin", "rollback", "entry #2")
		noRecordHint(t, failed)
	})

	t.Run("server deleted main, fetch --prune removed the tracking ref", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		c := srv.WorkingClone()
		srv.S.Git(srv.Dir, "checkout", "-q", "--detach")
		srv.SetRef("refs/heads/main", gitrepo.ZeroHash)
		c.S.Git(c.Dir, "fetch", "-q", "--prune", "origin")
		if c.Ref("refs/remotes/origin/main") != gitrepo.ZeroHash {
			t.Fatal("fetch --prune kept origin/main")
		}
		c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, "refs/heads/main", "origin does not serve it")
	})

	t.Run("odd refspec maps the remote's branches elsewhere", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		c := srv.WorkingClone()
		c.S.Git(c.Dir, "config", "--replace-all", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/heads/*")
		c.S.Git(c.Dir, "fetch", "-q", "origin")
		res := c.MustVerify(c.CloneOpts("origin"))
		// The old tracking ref is not mapped any more: stale, reported.
		if got := localState(res, "refs/remotes/origin/main"); got != "stale" {
			t.Errorf("refs/remotes/origin/main local state %q; want stale", got)
		}
		srv.CommitMain("pushed past git-secure")
		c.S.Git(c.Dir, "fetch", "-q", "origin")
		c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, "refs/heads/main", "refs/remotes/origin/heads/main", "without an entry")
	})

	t.Run("narrow refspec: a stale tracking ref is not judged, main still is", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		main := srv.Ref("refs/heads/main")
		srv.SetRef("refs/heads/feature", srv.NewCommit(main, "feature"))
		srv.Record("carol", "feature")
		c := srv.WorkingClone()
		c.S.Git(c.Dir, "config", "--replace-all", "remote.origin.fetch", "+refs/heads/main:refs/remotes/origin/main")
		// The server moves feature without an entry; this clone no longer
		// fetches it: its old tracking ref is stale, and reported so.
		srv.SetRef("refs/heads/feature", srv.NewCommit(main, "unrecorded"))
		c.S.Git(c.Dir, "fetch", "-q", "origin")
		res := c.MustVerify(c.CloneOpts("origin"))
		if got := localState(res, "refs/remotes/origin/feature"); got != "stale" {
			t.Errorf("origin/feature local state %q; want stale", got)
		}
		if note, _ := refNote(res, "refs/heads/feature"); !strings.Contains(note, "not fetched from origin") {
			t.Errorf("feature note %q; want not fetched", note)
		}
		srv.CommitMain("pushed past git-secure")
		c.S.Git(c.Dir, "fetch", "-q", "origin")
		c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, "refs/heads/main", "without an entry")
	})

	t.Run("a refspec that cannot be mapped back is refused", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		c := srv.WorkingClone()
		c.S.Git(c.Dir, "config", "--add", "remote.origin.fetch", "main:refs/remotes/origin/other")
		if _, err := verify.LoadCloneState(c.G, "origin"); err == nil || !strings.Contains(err.Error(), "not a full ref name") {
			t.Fatalf("LoadCloneState with a short refspec source: %v; want a refusal", err)
		}
		c.S.Git(c.Dir, "config", "--unset-all", "remote.origin.fetch")
		g, err := gitrepo.OpenWithEnv(c.Dir, c.S.Environ())
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		if _, err := verify.LoadCloneState(g, "origin"); err == nil || !strings.Contains(err.Error(), "no fetch refspec") {
			t.Fatalf("LoadCloneState without a fetch refspec: %v; want a refusal", err)
		}
	})

	t.Run("a recorded protected tag moved on the server", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		srv.AddRule(policy.Rule{Name: "releases", Refs: []string{"refs/tags/v*"}, Allow: []string{"alice"}})
		srv.Apply("alice")
		srv.S.Git(srv.Dir, "tag", "-f", "-a", "v1.0", "-m", "moved release", "HEAD~1")
		c := srv.WorkingClone()
		_, failed := c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, "refs/tags/v1.0", "local refs/tags/v1.0")
		noRecordHint(t, failed)
	})

	t.Run("a new tag under a protected pattern, named as REF", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		srv.AddRule(policy.Rule{Name: "releases", Refs: []string{"refs/tags/v*"}, Allow: []string{"alice"}})
		srv.Apply("alice")
		srv.S.Git(srv.Dir, "tag", "v2.0")
		c := srv.WorkingClone()
		// A tag the log never recorded is the clone's own ...
		res := c.MustVerify(c.CloneOpts("origin"))
		if got := localState(res, "refs/tags/v2.0"); got != "new" {
			t.Errorf("refs/tags/v2.0 local state %q; want new", got)
		}
		// ... unless asked about: then it is judged.
		opts := c.CloneOpts("origin")
		opts.Refs = []string{"refs/tags/v2.0"}
		c.MustFail(opts, verify.ErrUnrecorded, "refs/tags/v2.0", "no entry")
	})

	t.Run("an unrecorded ref a new rule protects", func(t *testing.T) {
		t.Parallel()
		// Pushed while no rule covered it, so by anyone: the hint must
		// not invite whoever protects it to sign it unread (attack run,
		// session 14: it said "if refs/tags/v3.0 is meant to exist,
		// record it").
		srv := tmpl.Clone(t)
		srv.S.Git(srv.Dir, "tag", "v3.0")
		srv.AddRule(policy.Rule{Name: "releases", Refs: []string{"refs/tags/v*"}, Allow: []string{"alice"}})
		srv.Apply("alice")
		p, _ := srv.MustFail(verify.Options{}, verify.ErrUnrecorded, "refs/tags/v3.0")
		for _, w := range []string{"review it first (git log refs/tags/v3.0)", "if you wrote or reviewed all of it, record it", "otherwise delete it"} {
			if !strings.Contains(p.Hint, w) {
				t.Errorf("hint %q does not say %q", p.Hint, w)
			}
		}
	})

	t.Run("policy ref moved by hand in a clone", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		c := srv.WorkingClone()
		p, cur, err := c.R.CurrentPolicy()
		if err != nil {
			t.Fatal(err)
		}
		who, err := c.R.Ident()
		if err != nil {
			t.Fatal(err)
		}
		pc, err := policy.Save(c.G, p, cur, who, "same policy, new commit")
		if err != nil {
			t.Fatal(err)
		}
		c.SetRef(policy.Ref, pc)
		c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, policy.Ref, "without an entry")
		c.SetRef(policy.Ref, gitrepo.ZeroHash)
		p2, _ := c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, policy.Ref, "missing")
		if !strings.Contains(p2.Hint, "git fetch origin 'refs/secure/*:refs/secure/*'") {
			t.Errorf("hint %q; want the fetch of the metadata", p2.Hint)
		}
	})

	t.Run("the clone's local entry without the remote's log tip fails closed", func(t *testing.T) {
		t.Parallel()
		srv := tmpl.Clone(t)
		c := srv.WorkingClone()
		c.S.Git(c.Dir, "config", "user.signingkey", c.Key("alice"))
		b := c.CommitMain("recorded here, not pushed")
		c.Approve("bob", "main", b, "")
		c.Record("alice", "main")
		// Nothing says which entries the remote has: origin/main is at
		// an older state of the log, as a rollback would be.
		_, failed := c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, "refs/heads/main", "rollback")
		noRecordHint(t, failed)
		// A remembered tip without the helper carrying fetches (removed
		// since) does not say it either.
		c.S.Git(c.Dir, "config", "remote.origin.securetip", srv.Ref("refs/secure/rsl").String())
		c.MustFail(c.CloneOpts("origin"), verify.ErrUnrecorded, "refs/heads/main", "rollback")
	})
}

// TestCloneStateCovers: which remote refs a fetch stores somewhere.
func TestCloneStateCovers(t *testing.T) {
	t.Parallel()
	spec := func(s string) gitrepo.Refspec {
		r, err := gitrepo.ParseFetchRefspec(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	st := &verify.CloneState{Fetch: []gitrepo.Refspec{spec("+refs/heads/*:refs/remotes/origin/*"), spec("^refs/heads/wip/*"), spec("refs/notes/commits:refs/remotes/origin/notes")}}
	for ref, want := range map[string]bool{
		"refs/heads/main":     true,
		"refs/heads/a/b":      true,
		"refs/heads/wip/x":    false,
		"refs/tags/v1":        false,
		"refs/notes/commits":  true,
		"refs/notes/other":    false,
		"refs/remotes/origin": false,
	} {
		if got := st.Covers(ref); got != want {
			t.Errorf("Covers(%s) = %v, want %v", ref, got, want)
		}
	}
}
