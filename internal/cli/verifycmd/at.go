package verifycmd

import (
	"errors"
	"os"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// verifiedAt answers "was commit at ever a verified state of ref": the
// number of the entry that recorded it, 0 when none did.
func verifiedAt(r *porcelain.Repo, res *verify.Result, ref, at string) (uint64, error) {
	want, err := r.Git.ResolveRevision(at)
	if err != nil {
		if h, perr := gitrepo.ParseHash(at); perr == nil {
			want = h // the commit may be gone locally; the log still knows it
		} else {
			return 0, report.Usagef("unknown commit %q", at)
		}
	}
	skipped := map[uint64]bool{}
	for _, n := range res.SkippedEntries {
		skipped[n] = true
	}
	var found uint64
	match := func(h gitrepo.Hash) bool {
		if h == want {
			return true
		}
		c, err := r.Git.PeelToCommit(h)
		return err == nil && c == want
	}
	// Entries up to the saved checkpoint are answered from the index its
	// store keeps; the newer ones from the log.
	store := r.Checkpoints()
	cp, _ := store.Load()
	indexed := false
	err = rsl.WalkBack(r.Git, res.Tip, func(rec *rsl.Record) (bool, error) {
		e := rec.Entry
		if cp != nil && cp.Index != nil && cp.IsEntry(e.Number, rec.ID) {
			indexed = true
			return false, nil
		}
		if e.Type == rsl.TypeAnnotation {
			for _, s := range e.Skips {
				skipped[s.Number] = true
			}
			return true, nil
		}
		if e.Ref != ref || skipped[e.Number] || e.New.IsZero() {
			return true, nil
		}
		if match(e.New) {
			found = e.Number
		}
		return found == 0, nil
	})
	if err != nil || found != 0 || !indexed {
		return found, err
	}
	found, err = verify.RecordedAt(r.Git, store, cp, ref, skipped, want)
	if errors.Is(err, verify.ErrNoIndex) {
		return walkAt(r, cp, ref, skipped, match)
	}
	return found, err
}

// walkAt is verifiedAt's walk below the checkpoint, when it has no index.
func walkAt(r *porcelain.Repo, cp *verify.Checkpoint, ref string, skipped map[uint64]bool, match func(gitrepo.Hash) bool) (uint64, error) {
	var found uint64
	err := rsl.WalkBack(r.Git, cp.EntryID, func(rec *rsl.Record) (bool, error) {
		e := rec.Entry
		if e.Type == rsl.TypeAnnotation {
			for _, s := range e.Skips {
				skipped[s.Number] = true
			}
			return true, nil
		}
		if e.Ref == ref && !skipped[e.Number] && !e.New.IsZero() && match(e.New) {
			found = e.Number
		}
		return found == 0, nil
	})
	return found, err
}

// writeSummary signs and writes a verification summary for ref.
func writeSummary(f *factory.Factory, r *porcelain.Repo, res *verify.Result, ref, keyFile, out string) error {
	var st *verify.RefStatus
	for i := range res.Refs {
		if res.Refs[i].Ref == ref {
			st = &res.Refs[i]
		}
	}
	if st == nil || st.Entry == 0 {
		return report.Usagef("%s has no verified entry to attest", ref)
	}
	repoURI := "git+file://" + r.Git.GitDir()
	if u, ok, _ := r.Git.Config("remote.origin.url"); ok {
		repoURI = "git+" + u
	}
	policyCommit, _, err := r.Git.ResolveRef(rsl.PolicyRef)
	if err != nil {
		return err
	}
	sum := attest.Summary{Repository: repoURI, Ref: ref, Commit: st.Target, Entry: st.Entry, EntryID: st.EntryID,
		RSLTip: res.Tip, PolicyCommit: policyCommit, RootVersion: res.RootVersion, RulesVersion: res.RulesVersion,
		Verified: f.Now(), Version: f.Version}
	stmt, err := sum.Statement()
	if err != nil {
		return err
	}
	s, err := f.Signer(keyFile)
	if err != nil {
		return err
	}
	defer s.Close()
	env, err := attest.Sign(stmt, s)
	if err != nil {
		return err
	}
	env = append(env, '\n')
	if out == "" || out == "-" {
		_, err = f.Stdout.Write(env)
		return err
	}
	if err := os.WriteFile(out, env, 0o644); err != nil {
		return report.Usagef("write %s: %v", out, err)
	}
	f.Info("git-secure: wrote a signed verification summary of %s at %s to %s\n", ref, st.Target.String()[:12], out)
	return nil
}
