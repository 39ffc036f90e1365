package gitrepo

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

func TestOpenGitDir(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("w", 2)
	real, _ := filepath.EvalSymlinks(dir)
	bare := filepath.Join(s.Home, "b.git")
	s.Git(s.Home, "clone", "-q", "--bare", dir, bare)
	realBare, _ := filepath.EvalSymlinks(bare)
	linked := filepath.Join(s.Home, "linked")
	s.Git(dir, "worktree", "add", "-q", linked)
	s256 := filepath.Join(s.Home, "s256")
	_, s256Err := s.RunErr(s.Home, nil, "git", "init", "-q", "--object-format=sha256", s256)
	wt := s.InitRepo("configured", 1)
	s.Git(wt, "config", "core.worktree", wt)
	fakeBare := s.InitRepo("fakebare", 1)
	s.Git(fakeBare, "config", "core.bare", "true")

	tests := []struct {
		name, gitDir, workTree string
		want                   error // nil: opens
	}{
		{"work tree", filepath.Join(real, ".git"), real, nil},
		{"bare", realBare, "", nil},
		{"linked work tree", filepath.Join(real, ".git", "worktrees", "linked"), linked, ErrNeedProbe},
		{"core.worktree set", filepath.Join(wt, ".git"), wt, ErrNeedProbe},
		{"bare = true with a work tree", filepath.Join(fakeBare, ".git"), fakeBare, ErrNeedProbe},
		{"not a git directory", s.Home, "", ErrNeedProbe},
		{"sha256", filepath.Join(s256, ".git"), s256, ErrNeedProbe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "sha256" && s256Err != nil {
				t.Skipf("no sha256 support: %v", s256Err)
			}
			r, err := OpenGitDir(tt.gitDir, tt.workTree, append(inProcessEnv(s), "GIT_DIR=/nonexistent"))
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.GitDir() != tt.gitDir || r.WorkTree() != tt.workTree {
				t.Fatalf("GitDir=%q WorkTree=%q", r.GitDir(), r.WorkTree())
			}
			// git rev-parse (Open) finds the same repository.
			probe := tt.workTree
			if probe == "" {
				probe = tt.gitDir
			}
			viaGit, err := OpenWithEnv(probe, inProcessEnv(s))
			if err != nil {
				t.Fatal(err)
			}
			defer viaGit.Close()
			if viaGit.GitDir() != r.GitDir() || viaGit.WorkTree() != r.WorkTree() || viaGit.commonDir != r.commonDir {
				t.Fatalf("OpenGitDir: %q %q %q; git rev-parse: %q %q %q", r.GitDir(), r.WorkTree(), r.commonDir, viaGit.GitDir(), viaGit.WorkTree(), viaGit.commonDir)
			}
			h, ok, err := r.ResolveRef("refs/heads/main")
			if err != nil || !ok {
				t.Fatalf("ResolveRef: %v %v", ok, err)
			}
			if _, err := r.ReadCommit(h); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := OpenGitDir("relative/.git", "", s.Environ()); err == nil || errors.Is(err, ErrNeedProbe) {
		t.Errorf("relative path: err = %v", err)
	}
}

func TestIsAncestor(t *testing.T) {
	s, dir, r := newRepo(t, 1)
	root := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	var chain []Hash
	for i := 0; i < maxAncestorWalk+10; i++ {
		chain = append(chain, mustParse(t, s.Commit(dir, "f", strings.Repeat("x", i+1), "c")))
	}
	s.Git(dir, "checkout", "-q", "-b", "side", chain[2].String())
	side := mustParse(t, s.Commit(dir, "g", "side", "side"))
	s.Git(dir, "checkout", "-q", "main")
	s.Git(dir, "merge", "-q", "--no-edit", "side")
	merge := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	orphanDir := s.InitRepo("other", 1)
	orphan := mustParse(t, s.Git(orphanDir, "rev-parse", "HEAD"))
	tip := chain[len(chain)-1]

	tests := []struct {
		name string
		a, b Hash
		want bool
	}{
		{"same", tip, tip, true},
		{"parent", chain[len(chain)-2], tip, true},
		{"through the walk limit (git decides)", root, tip, true},
		{"descendant is not an ancestor", tip, chain[0], false},
		{"second parent of a merge", side, merge, true},
		{"side branch is not an ancestor of main before the merge", side, tip, false},
		{"whole short history walked", chain[5], chain[1], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.IsAncestor(tt.a, tt.b)
			if err != nil || got != tt.want {
				t.Fatalf("IsAncestor = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	// An object this repository lacks is an error, as with git merge-base.
	if _, err := r.IsAncestor(orphan, chain[1]); err == nil {
		t.Error("IsAncestor of a missing commit: no error")
	}
}
