package porcelain

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// A staged policy change is an unsigned proposal: anyone who can push to
// the server can create refs/secure/policy-staging there (the server only
// keeps it from being deleted or replaced), and a fetch brings it into
// every clone. Building on it, signing it or applying it must therefore
// never happen unnoticed: before this, a staged change planted by a pusher
// without any key (add person mal, allow mal on main) was adopted by
// alice's next fetch, her "git secure policy add-rule docs ..." built on
// it, and "git secure policy apply" signed and put mal's rule in force
// while saying only "staged: add rule docs".
//
// The clone remembers the staged commit its own commands last wrote (and
// one it discarded) in .git/secure/staged; a staged change that is not
// that commit came from elsewhere. Editing it is refused, and signing or
// applying it needs its commit named (--staged COMMIT) after review: the
// refusal lists what it changes.

// stagedStatePath is the clone's note of its own staged commit.
func stagedStatePath(gitDir string) string { return filepath.Join(gitDir, "secure", "staged") }

// StagedState is what .git/secure/staged holds: the staged commit this
// clone's commands last wrote, and the last one it discarded.
type StagedState struct {
	Own, Discarded gitrepo.Hash
}

// LoadStagedState reads the note; a missing or malformed note means
// nothing is known (every staged change then counts as someone else's).
func LoadStagedState(gitDir string) StagedState {
	var st StagedState
	data, err := os.ReadFile(stagedStatePath(gitDir))
	if err != nil || len(data) > 1024 {
		return st
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			return StagedState{}
		}
		h, err := gitrepo.ParseHash(v)
		if err != nil {
			return StagedState{}
		}
		switch k {
		case "own":
			st.Own = h
		case "discarded":
			st.Discarded = h
		default:
			return StagedState{}
		}
	}
	return st
}

func (st StagedState) save(gitDir string) error {
	var b bytes.Buffer
	if !st.Own.IsZero() {
		fmt.Fprintf(&b, "own %s\n", st.Own)
	}
	if !st.Discarded.IsZero() {
		fmt.Fprintf(&b, "discarded %s\n", st.Discarded)
	}
	path := stagedStatePath(gitDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("note the staged policy change: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("note the staged policy change: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("note the staged policy change: %w", err)
	}
	return nil
}

// noteOwnStaged records h as written by this clone.
func (r *Repo) noteOwnStaged(h gitrepo.Hash) error {
	st := LoadStagedState(r.Git.GitDir())
	st.Own = h
	return st.save(r.Git.GitDir())
}

// Foreign reports whether the staged change came from elsewhere (a fetch)
// rather than from a git secure command in this clone.
func (r *Repo) Foreign(st *Staged) bool {
	return !st.Commit.IsZero() && LoadStagedState(r.Git.GitDir()).Own != st.Commit
}

// reviewedStaged accepts a staged change this clone wrote, or one whose
// commit the user names (reviewed: at least 7 hex digits of it) after
// reviewing it; otherwise it refuses, listing what the change does.
func (r *Repo) reviewedStaged(st *Staged, reviewed, doing string) error {
	if reviewed != "" {
		if len(reviewed) < 7 || !strings.HasPrefix(st.Commit.String(), strings.ToLower(reviewed)) {
			return fmt.Errorf("%w: --staged %s does not name the staged policy change, which is %s: review that one (git secure policy list --staged) before you %s it", ErrRefused, display.Escape(reviewed), st.Commit.String()[:12], doing)
		}
		return nil
	}
	if !r.Foreign(st) {
		return nil
	}
	short := st.Commit.String()[:12]
	return fmt.Errorf("%w: the staged policy change %s was not made in this clone (a fetch brought it: anyone who can push can stage a change): it %s; review it (git secure policy list --staged), then %s it with --staged %s, or drop it with git secure policy discard",
		ErrRefused, short, display.Escape(strings.Join(policy.Changes(st.Base, st.Policy), "; ")), doing, short)
}

// refuseForeignEdit refuses to build a change on a staged change from
// elsewhere: the user's edit would carry it unseen into what they sign.
func (r *Repo) refuseForeignEdit(st *Staged) error {
	if !r.Foreign(st) {
		return nil
	}
	short := st.Commit.String()[:12]
	return fmt.Errorf("%w: the staged policy change %s was not made in this clone (a fetch brought it: anyone who can push can stage a change), so a change made on top of it would carry it: it %s; review it (git secure policy list --staged), then sign it first (git secure policy sign --staged %s), or drop it (git secure policy discard) and make your change again",
		ErrRefused, short, display.Escape(strings.Join(policy.Changes(st.Base, st.Policy), "; ")), short)
}
