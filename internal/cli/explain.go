package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

func (a *app) explainCommand() *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "which rules apply to REF, which are met, who can still approve and how",
		ArgsUsage: "REF",
		Description: `Explains the pending update of REF (its value here against its latest entry) or,
when there is none, the update its latest entry recorded. Exit 0 when the update
satisfies the policy, 1 when it does not.`,
		Flags: []cli.Flag{keyFlag, jsonFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("explain takes exactly one REF")
			}
			r, err := a.open()
			if err != nil {
				return err
			}
			x, err := r.Explain(c.Args().First(), c.String("key"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				if err := a.printJSON(x); err != nil {
					return err
				}
			} else {
				a.printExplanation(x)
			}
			if !x.Satisfied {
				return cli.Exit("", ExitFailed)
			}
			return nil
		},
	}
}

func (a *app) printExplanation(x *porcelain.Explanation) {
	state := fmt.Sprintf("recorded at %s (entry #%d)", shortHash(x.Recorded), x.Entry)
	if x.Entry == 0 {
		state = "not recorded yet"
	}
	a.out("%s: %s\n", x.Ref, state)
	if x.Pending {
		a.out("pending update: %s -> %s (not recorded yet)\n", shortHash(x.Old), shortHash(x.New))
	} else if x.Entry != 0 {
		a.out("latest update: %s -> %s\n", shortHash(x.Old), shortHash(x.New))
	}
	signer := x.Signer
	if signer == "" {
		signer = "(no person: pass --key, or set user.signingkey)"
	}
	a.out("signer: %s; approved by: %s\n", signer, orNone(x.Approved))
	if !x.Protected {
		a.out("no rule protects %s: anyone in the policy may record it\n", x.Ref)
	}
	for _, r := range x.Rules {
		a.out("rule %s %s\n", r.Name, ruleSummary(ruleJSON{Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold, Require: r.Require, TestsBy: r.TestsBy, EveryRef: r.EveryRef}))
		switch {
		case !r.Applies:
			a.out("  does not apply to this update (no protected file changes)\n")
		default:
			a.out("  counted: %s\n", orNone(r.Signed))
			if len(r.Files) > 0 {
				a.out("  protected files changed: %s\n", strings.Join(r.Files, ", "))
			}
		}
	}
	for _, n := range x.Notes {
		a.out("note: %s\n", n)
	}
	if x.Satisfied {
		a.out("result: satisfied\n")
		return
	}
	a.out("result: NOT satisfied\n")
	for _, f := range x.Failures {
		a.out("  - %s: %s\n    next: %s\n", orWord(f.Rule, "policy"), f.Detail, f.Next)
	}
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "nobody"
	}
	return strings.Join(xs, ", ")
}

func orWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

// verifyAt answers "was commit ever a verified state of ref".
func (a *app) verifyAt(r *porcelain.Repo, res *verify.Result, ref, at string) (uint64, error) {
	want, err := r.Git.ResolveRevision(at)
	if err != nil {
		if h, perr := gitrepo.ParseHash(at); perr == nil {
			want = h // the commit may be gone locally; the log still knows it
		} else {
			return 0, usageErr("unknown commit %q", at)
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
	// Entries up to the saved checkpoint are answered from its index.
	cp, _ := verify.LoadCheckpoint(verify.CheckpointPath(r.Git.GitDir()))
	indexed := false
	err = rsl.WalkBack(r.Git, res.Tip, func(rec *rsl.Record) (bool, error) {
		e := rec.Entry
		if cp != nil && cp.Index != nil && e.Number == cp.Entry && rec.ID == cp.EntryID {
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
	found, err = verify.RecordedAt(r.Git, cp, ref, skipped, want)
	if errors.Is(err, verify.ErrNoIndex) {
		return a.walkAt(r, cp, ref, skipped, match)
	}
	return found, err
}

// walkAt is verifyAt's walk below the checkpoint, when it has no index.
func (a *app) walkAt(r *porcelain.Repo, cp *verify.Checkpoint, ref string, skipped map[uint64]bool, match func(gitrepo.Hash) bool) (uint64, error) {
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
func (a *app) writeSummary(r *porcelain.Repo, res *verify.Result, ref, keyFile, out string) error {
	var st *verify.RefStatus
	for i := range res.Refs {
		if res.Refs[i].Ref == ref {
			st = &res.Refs[i]
		}
	}
	if st == nil || st.Entry == 0 {
		return usageErr("%s has no verified entry to attest", ref)
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
		Verified: a.env.Now(), Version: Version}
	stmt, err := sum.Statement()
	if err != nil {
		return err
	}
	s, err := r.LoadSigner(keyFile)
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
		_, err = a.env.Stdout.Write(env)
		return err
	}
	if err := os.WriteFile(out, env, 0o644); err != nil {
		return usageErr("write %s: %v", out, err)
	}
	a.info("git-secure: wrote a signed verification summary of %s at %s to %s\n", ref, st.Target.String()[:12], out)
	return nil
}

func (a *app) policyCheck(c *cli.Context) error {
	r, err := a.open()
	if err != nil {
		return err
	}
	st, err := r.LoadStaged()
	if err != nil {
		return err
	}
	clone, err := judgedClone(r.Git, "")
	if err != nil {
		return err
	}
	noRemote := clone == nil && r.Git.WorkTree() != ""
	// What a staged policy would refuse in history, not whether the
	// server's state is fresh.
	res, err := verify.Verify(r.Git, verify.Options{Now: a.env.Now(), PolicyOverride: st.Policy, Clone: clone, LocalAhead: noRemote, IgnoreMissingRefs: noRemote, SkipFreshness: true})
	var failed *verify.Failed
	if err != nil && !errors.As(err, &failed) {
		return err
	}
	if c.Bool("json") {
		out := newVerifyJSON(res, failed)
		if err := a.printJSON(out); err != nil {
			return err
		}
		if failed != nil {
			return cli.Exit("", ExitFailed)
		}
		return nil
	}
	what := "the staged policy"
	if st.Commit.IsZero() {
		what = "the policy in force (nothing is staged)"
	}
	if failed == nil {
		a.out("%s accepts all %d entries of the log's history\n", what, res.Entries)
		return nil
	}
	a.out("%s would have refused %d past update(s):\n", what, len(failed.Problems))
	for _, p := range failed.Problems {
		a.out("  - %s\n", p.Error())
	}
	return cli.Exit("", ExitFailed)
}
