package attestcmd

import (
	"context"
	"strings"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// approveRemote is the remote whose log an approval of ref must build on:
// the branch's upstream remote, else origin, else the only remote; "" when
// the repository has none (nothing to refresh from).
func approveRemote(r *porcelain.Repo, ref string) (string, error) {
	if name, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		if v, ok, err := r.ConfigValue("branch." + name + ".remote"); err != nil {
			return "", err
		} else if ok && v != "" && v != "." {
			return v, nil
		}
	}
	urls, err := r.Git.ConfigAll("remote.origin.url")
	if err != nil {
		return "", err
	}
	if len(urls) > 0 {
		return "origin", nil
	}
	out, err := r.Git.Run(context.Background(), nil, "remote")
	if err != nil {
		return "", err
	}
	if names := strings.Fields(string(out)); len(names) == 1 {
		return names[0], nil
	}
	return "", nil
}

// refreshForApprove fetches from remote before an approval, so that it
// approves the update from the value the remote's log records now, not
// from an outdated one (an approval of an update that can no longer
// happen counts for nothing). A remote routed through git-remote-secure
// verifies what it brings and moves refs/secure/* with it. When the fetch
// fails the approval is refused, naming the fetch to run, or --no-fetch.
func refreshForApprove(f *factory.Factory, r *porcelain.Repo, remote string) error {
	f.Info("git-secure: fetching from %s first, so the approval builds on its latest log (--no-fetch to skip)\n", remote)
	if _, err := r.Git.RunTee(context.Background(), f.Stderr, "fetch", "--quiet", remote); err != nil {
		return report.Usagef("cannot refresh from %s before approving, so the approval could build on an outdated log: run git fetch %s and approve again, or approve against the local log with --no-fetch", remote, remote)
	}
	return nil
}

// warnReplaced names the junk in the store (what no git-secure writer
// makes, planted by anyone with push access: it counts for nothing) that
// the approval replaced.
func warnReplaced(f *factory.Factory, res *porcelain.ApproveResult) {
	for _, j := range res.Replaced {
		display.Fprintf(f.Stderr, "git-secure: warning: %s\n", j)
	}
}

// warnUnreachable says when the update just approved can no longer happen
// as a plain push: the branch moved on since the commit was made (the new
// value does not contain the old one: only a force push would do it), or
// the remote's branch (as last fetched) is neither the update's old value
// (not pushed yet) nor its new one (pushed, approved afterwards).
func warnUnreachable(f *factory.Factory, r *porcelain.Repo, remote string, res *porcelain.ApproveResult) {
	if strings.HasPrefix(res.Ref, "refs/heads/") && !res.From.IsZero() && !res.To.IsZero() {
		if ok, err := r.Git.IsAncestor(res.From, res.To); err == nil && !ok {
			display.Fprintf(f.Stderr, "git-secure: warning: %s moved on to %s since %s was made (it does not contain it): this update is not a fast-forward, so only a force push could make it\n",
				res.Ref, cmdutil.ShortHash(res.From), cmdutil.ShortHash(res.To))
			display.Fprintf(f.Stderr, "git-secure: hint: ask for the commit to be rebased onto %s and approve that one\n", cmdutil.ShortHash(res.From))
			return
		}
	}
	name, ok := strings.CutPrefix(res.Ref, "refs/heads/")
	if remote == "" || !ok {
		return
	}
	at, ok, err := r.Git.ResolveRef("refs/remotes/" + remote + "/" + name)
	if err != nil || !ok || at == res.From || at == res.To {
		return
	}
	display.Fprintf(f.Stderr, "git-secure: warning: %s/%s is at %s now, not %s: the update this approves (%s -> %s) can no longer happen, so the approval will not count\n",
		remote, name, cmdutil.ShortHash(at), cmdutil.ShortHash(res.From), cmdutil.ShortHash(res.From), cmdutil.ShortHash(res.To))
	display.Fprintf(f.Stderr, "git-secure: hint: approve the update from where %s is now: git fetch %s && git secure attest approve %s --to %s\n",
		res.Ref, remote, res.Ref, cmdutil.ShortHash(res.To))
}

// shareApproval says how the approval reaches the remote. A plain git push
// sends it with the branch it pushes; but when that branch is behind its
// upstream git refuses the push before anything is sent, so the person is
// told to pull first (or to push the approvals alone).
func shareApproval(f *factory.Factory, r *porcelain.Repo, remote string) {
	if remote == "" {
		remote = "origin"
	}
	alone := "git push " + remote + " refs/secure/attestations"
	if branch, upstream, ok := behindUpstream(r); ok {
		f.Info("git-secure: share it with: git pull && git push (your %s is behind %s: git refuses to push it until you pull), or now alone: %s\n", branch, upstream, alone)
		return
	}
	f.Info("git-secure: share it with: git push (it goes with your next push), or alone: %s\n", alone)
}

// behindUpstream reports whether the checked-out branch is strictly behind
// its upstream's last fetched value, naming both.
func behindUpstream(r *porcelain.Repo) (branch, upstream string, behind bool) {
	head, err := r.Git.Run(context.Background(), nil, "symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return "", "", false
	}
	branch = strings.TrimSpace(string(head))
	up, err := r.Git.Run(context.Background(), nil, "rev-parse", "--symbolic-full-name", "--verify", "--quiet", "@{upstream}")
	if err != nil {
		return "", "", false
	}
	upRef := strings.TrimSpace(string(up))
	local, ok1, err1 := r.Git.ResolveRef("refs/heads/" + branch)
	remote, ok2, err2 := r.Git.ResolveRef(upRef)
	if err1 != nil || err2 != nil || !ok1 || !ok2 || local == remote {
		return "", "", false
	}
	if isAnc, err := r.Git.IsAncestor(local, remote); err != nil || !isAnc {
		return "", "", false
	}
	return branch, strings.TrimPrefix(upRef, "refs/remotes/"), true
}
