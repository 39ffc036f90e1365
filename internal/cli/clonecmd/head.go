package clonecmd

import (
	"context"
	"slices"
	"strings"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
)

// maxNamedBranches bounds the protected branches the warning names.
const maxNamedBranches = 3

// warnUnprotectedHead warns when the branch the new clone checked out
// (the remote's HEAD: whoever controls the server chooses it) is one no
// rule or global rule protects. Verification passes such a branch at any
// value, so anyone who can push to the remote may have written what is
// now checked out: the clone's "verified" line must not stand for it
// unsaid. The warning names protected branches to check out instead.
func warnUnprotectedHead(f *factory.Factory, g *gitrepo.Repo) {
	branch, err := g.SymbolicRef("HEAD")
	if err != nil || !strings.HasPrefix(branch, "refs/heads/") {
		return
	}
	tip, ok, err := g.ResolveRef(policy.Ref)
	if err != nil || !ok {
		return
	}
	r := &porcelain.Repo{Git: g, Now: f.Now, Home: f.Getenv("HOME")}
	pol, err := r.PolicyAt(tip)
	if err != nil {
		f.Info("git-secure: warning: cannot tell whether a rule protects the branch checked out, %s: %v\n", strings.TrimPrefix(branch, "refs/heads/"), err)
		return
	}
	if _, born, err := g.ResolveRef(branch); err == nil && !born {
		if switchToProtected(f, g, pol, branch, false) {
			return
		}
		warnUnbornHead(f, g, pol, branch)
		return
	}
	if protects(pol, branch) {
		return
	}
	if switchToProtected(f, g, pol, branch, true) {
		return
	}
	f.Info("git-secure: warning: the branch checked out, %s (the remote's HEAD), is protected by no rule: verification accepts it at any value, so anyone who can push to the remote may have written it\n", strings.TrimPrefix(branch, "refs/heads/"))
	f.Info("git-secure: hint: no branch of the remote is protected; ask the project which one to trust\n")
}

// switchToProtected checks out, in place of the remote's HEAD (branch,
// which no rule protects, or which the remote does not have), a branch of
// the remote that the policy protects: main, else master, else the first
// one. Whoever can push to the remote (or set its HEAD) chooses HEAD, so a
// fresh clone whose log protects branches starts on one of them, and says
// which branches are protected and how to get the unprotected one. It
// reports whether it switched; the unprotected local branch git made is
// removed (its remote-tracking ref stays).
func switchToProtected(f *factory.Factory, g *gitrepo.Repo, pol *policy.Policy, branch string, born bool) bool {
	target := ""
	for _, name := range []string{"main", "master"} {
		if _, ok, err := g.ResolveRef("refs/remotes/origin/" + name); err == nil && ok && protects(pol, "refs/heads/"+name) {
			target = name
			break
		}
	}
	names := protectedBranches(g, pol)
	if target == "" && len(names) > 0 {
		target = names[0]
	}
	if target == "" {
		return false
	}
	if !slices.Contains(names, target) {
		names = append([]string{target}, names...)
	}
	name := strings.TrimPrefix(branch, "refs/heads/")
	if _, err := g.Run(context.Background(), nil, "checkout", "-q", "-b", target, "--track", "refs/remotes/origin/"+target); err != nil {
		f.Info("git-secure: warning: could not check out the protected branch %s in place of %s: %v\n", target, name, err)
		return false
	}
	why := "which no rule protects: verification accepts it at any value, so anyone who can push to the remote may have written it"
	if !born {
		why = "which the remote does not have (a server repository made with git init --bare without -b keeps HEAD on master)"
	} else if _, err := g.Run(context.Background(), nil, "branch", "-q", "-D", "--", name); err != nil {
		f.Info("git-secure: warning: could not delete the local branch %s git made from the remote's HEAD: %v\n", name, err)
	}
	f.Info("git-secure: warning: the remote's HEAD names branch %s, %s; checked out %s instead, a branch the policy protects (protected: %s)\n", name, why, target, strings.Join(names, ", "))
	if born {
		f.Info("git-secure: hint: to work on %s anyway: git checkout %s (unprotected: what it holds was not checked against any rule)\n", name, name)
	}
	f.Info("git-secure: hint: whoever runs the server points every clone at %s, in its repository: git symbolic-ref HEAD refs/heads/%s\n", target, target)
	return true
}

// protects reports whether a rule of pol covers ref. A global rule does
// not count: no-force-push and min-persons cover every ref by default, yet
// a ref no rule covers still moves forward without an entry, by anyone.
func protects(pol *policy.Policy, ref string) bool {
	return pol.Protected(ref)
}

// protectedBranches names, from origin's remote-tracking refs, up to
// maxNamedBranches branches pol protects.
func protectedBranches(g *gitrepo.Repo, pol *policy.Policy) []string {
	refs, err := g.ListRefs("refs/remotes/origin/")
	if err != nil {
		return nil
	}
	var names []string
	for _, ref := range refs {
		name := strings.TrimPrefix(ref.Name, "refs/remotes/origin/")
		if name == "HEAD" || !protects(pol, "refs/heads/"+name) {
			continue
		}
		if names = append(names, name); len(names) == maxNamedBranches {
			break
		}
	}
	return names
}

// warnUnbornHead says what to run when the remote's HEAD names a branch
// the remote does not have (a server made with plain git init --bare keeps
// HEAD on master while the project pushes main): git checked out nothing
// and left the clone on an empty branch of that name, which is no
// unprotected branch anyone wrote.
func warnUnbornHead(f *factory.Factory, g *gitrepo.Repo, pol *policy.Policy, branch string) {
	name := strings.TrimPrefix(branch, "refs/heads/")
	f.Info("git-secure: warning: the remote's HEAD names branch %s, which the remote does not have (a server repository made with git init --bare without -b keeps HEAD on master): nothing is checked out\n", name)
	names := protectedBranches(g, pol)
	switch {
	case len(names) > 0:
		f.Info("git-secure: hint: check out a protected branch: git checkout %s (protected: %s)\n", names[0], strings.Join(names, ", "))
	default:
		if others := remoteBranches(g); len(others) > 0 {
			f.Info("git-secure: hint: no branch of the remote is protected; check out the one the project names: git checkout %s (the remote has: %s)\n", others[0], strings.Join(others, ", "))
		}
	}
	target := "main"
	if len(names) > 0 {
		target = names[0]
	}
	f.Info("git-secure: hint: whoever runs the server fixes it for every clone, in its repository: git symbolic-ref HEAD refs/heads/%s\n", target)
}

// remoteBranches names up to maxNamedBranches of origin's branches.
func remoteBranches(g *gitrepo.Repo) []string {
	refs, err := g.ListRefs("refs/remotes/origin/")
	if err != nil {
		return nil
	}
	var names []string
	for _, ref := range refs {
		if name := strings.TrimPrefix(ref.Name, "refs/remotes/origin/"); name != "HEAD" {
			if names = append(names, name); len(names) == maxNamedBranches {
				break
			}
		}
	}
	return names
}
