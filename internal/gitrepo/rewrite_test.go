package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// TestHistoryFilesLikeGit compares HistoryFiles with git itself: the shallow
// file it reports is the one that makes git call the repository shallow, and
// git reads history through the files it reports and no other (both files
// list the tip here, which git then reads without parents), in a
// work tree, a linked work tree, a bare repository and with the environment
// variables that move them.
func TestHistoryFilesLikeGit(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("w", 2)
	tip := strings.TrimSpace(s.Git(dir, "rev-parse", "HEAD"))
	bare := filepath.Join(s.Home, "b.git")
	s.Git(s.Home, "clone", "-q", "--bare", dir, bare)
	linked := filepath.Join(s.Home, "linked")
	s.Git(dir, "worktree", "add", "-q", linked)
	elsewhere := filepath.Join(s.Home, "elsewhere")

	write := func(path string) func() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(tip+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return func() { os.Remove(path) }
	}
	tests := []struct {
		name   string
		open   string
		env    []string
		create string // file written before the check
		want   []string
	}{
		{"clean work tree", dir, nil, "", nil},
		{"clean bare", bare, nil, "", nil},
		{"shallow work tree", dir, nil, filepath.Join(dir, ".git", "shallow"), []string{"shallow"}},
		{"shallow bare", bare, nil, filepath.Join(bare, "shallow"), []string{"shallow"}},
		{"shallow seen from a linked work tree", linked, nil, filepath.Join(dir, ".git", "shallow"), []string{"shallow"}},
		{"grafts work tree", dir, nil, filepath.Join(dir, ".git", "info", "grafts"), []string{"grafts"}},
		{"grafts bare", bare, nil, filepath.Join(bare, "info", "grafts"), []string{"grafts"}},
		{"grafts seen from a linked work tree", linked, nil, filepath.Join(dir, ".git", "info", "grafts"), []string{"grafts"}},
		{"GIT_SHALLOW_FILE", bare, []string{"GIT_SHALLOW_FILE=" + elsewhere}, elsewhere, []string{"shallow"}},
		{"GIT_SHALLOW_FILE to nothing", bare, []string{"GIT_SHALLOW_FILE=" + elsewhere}, "", nil},
		{"GIT_GRAFT_FILE", bare, []string{"GIT_GRAFT_FILE=" + elsewhere}, elsewhere, []string{"grafts"}},
		{"GIT_GRAFT_FILE moves info/grafts away", bare, []string{"GIT_GRAFT_FILE=" + elsewhere}, filepath.Join(bare, "info", "grafts"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.create != "" {
				defer write(tt.create)()
			}
			env := append(s.Environ(), tt.env...)
			r, err := OpenWithEnv(tt.open, env)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			files, err := r.HistoryFiles()
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, f := range files {
				kinds = append(kinds, f.Kind)
				if f.Kind == "grafts" && f.Path != tt.create {
					t.Errorf("grafts at %s, want %s", f.Path, tt.create)
				}
			}
			if strings.Join(kinds, " ") != strings.Join(tt.want, " ") {
				t.Errorf("HistoryFiles = %v, want %v", kinds, tt.want)
			}
			// git's own view, with the same environment.
			shallow, err := runGit(t.Context(), env, tt.open, nil, "rev-parse", "--is-shallow-repository")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.TrimSpace(string(shallow)) == "true", strings.Contains(strings.Join(kinds, " "), "shallow"); got != want {
				t.Errorf("git says shallow = %v, HistoryFiles says %v", got, want)
			}
			// Both files list the tip, which git then reads without parents.
			count, err := runGit(t.Context(), env, tt.open, nil, "rev-list", "--count", "HEAD")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := strings.TrimSpace(string(count)) == "1", len(kinds) > 0; got != want {
				t.Errorf("git reads HEAD without parents = %v, HistoryFiles found %v", got, kinds)
			}
		})
	}
}
