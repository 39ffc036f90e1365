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
