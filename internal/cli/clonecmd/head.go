package clonecmd

import (
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
		warnUnbornHead(f, g, pol, branch)
		return
	}
	if protects(pol, branch) {
		return
	}
	f.Info("git-secure: warning: the branch checked out, %s (the remote's HEAD), is protected by no rule: verification accepts it at any value, so anyone who can push to the remote may have written it\n", strings.TrimPrefix(branch, "refs/heads/"))
	if names := protectedBranches(g, pol); len(names) > 0 {
		f.Info("git-secure: hint: check out a protected branch: git checkout %s (protected: %s)\n", names[0], strings.Join(names, ", "))
	} else {
		f.Info("git-secure: hint: no branch of the remote is protected; ask the project which one to trust\n")
	}
}

// protects reports whether a rule or a global rule of pol covers ref.
func protects(pol *policy.Policy, ref string) bool {
	if pol.Protected(ref) {
		return true
	}
	for _, gr := range pol.GlobalRules() {
		if gr.CoversRef(ref) {
			return true
		}
	}
	return false
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
