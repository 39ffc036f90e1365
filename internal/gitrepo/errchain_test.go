package gitrepo

import (
	"errors"
	"strings"
	"testing"
)

// Each layer of the package adds only its own context: a missing object
// read through a peel, a tree walk or a commit read says "gitrepo: " once
// and names each object once ("gitrepo: peel X: gitrepo: object type X:
// gitrepo: not found" before), and stays ErrNotFound for errors.Is.
func TestErrorChains(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	missing := mustParse(t, strings.Repeat("ab", 20))
	tree := mustParse(t, s.Git(dir, "rev-parse", "HEAD^{tree}"))
	blob := mustParse(t, s.Git(dir, "hash-object", "-w", "--stdin"))
	// A tag whose target is missing (git mktag checks only the header).
	tagRaw := "object " + missing.String() + "\ntype commit\ntag gone\ntagger T <t@example.org> 1700000000 +0000\n\ngone\n"
	out, err := s.RunErr(dir, []byte(tagRaw), "git", "hash-object", "-t", "tag", "-w", "--literally", "--stdin")
	if err != nil {
		t.Fatal(err)
	}
	tag := mustParse(t, strings.TrimSpace(out))
	for _, tc := range []struct {
		name     string
		err      func() error
		want     string
		notFound bool
	}{
		{"peel missing", func() error { _, err := r.PeelToCommit(missing); return err },
			"gitrepo: peel " + missing.String() + ": object not found", true},
		{"peel tag of missing", func() error { _, err := r.PeelToCommit(tag); return err },
			"gitrepo: peel " + tag.String() + ": tag target " + missing.String() + ": object not found", true},
		{"read object", func() error { _, _, err := r.ReadObject(missing, 100); return err },
			"gitrepo: read object " + missing.String() + ": not found", true},
		{"read commit", func() error { _, err := r.ReadCommit(missing); return err },
			"gitrepo: read commit " + missing.String() + ": object not found", true},
		{"read commit of a tree", func() error { _, err := r.ReadCommit(tree); return err },
			"gitrepo: read commit " + tree.String() + ": it is a tree, not a commit", false},
		{"read tree", func() error { _, err := r.ReadTree(missing); return err },
			"gitrepo: read tree " + missing.String() + ": object not found", true},
		{"blob in missing tree", func() error { _, err := r.ReadBlobAt(missing, "a/b", 100); return err },
			`gitrepo: read "a/b" in tree ` + missing.String() + ": object not found", true},
		{"missing path", func() error { _, err := r.ReadBlobAt(tree, "nope/b", 100); return err },
			`gitrepo: read "nope/b" in tree ` + tree.String() + ": not found", true},
		{"peel blob", func() error { _, err := r.PeelToCommit(blob); return err },
			"gitrepo: peel " + blob.String() + ": ends at blob " + blob.String() + ", not a commit", false},
		{"symbolic ref", func() error { _, err := r.SymbolicRef("refs/heads/main"); return err },
			"gitrepo: symbolic ref refs/heads/main: not found", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
			if err != nil && strings.Count(err.Error(), "gitrepo: ") != 1 {
				t.Errorf("%q repeats the package prefix", err)
			}
			if errors.Is(err, ErrNotFound) != tc.notFound {
				t.Errorf("errors.Is(%v, ErrNotFound) = %v, want %v", err, !tc.notFound, tc.notFound)
			}
		})
	}
}

// A reader's callback error comes back as the callback made it: git is
// not blamed for it ("gitrepo: git cat-file --batch: ..." before).
func TestReadCommitsCallbackError(t *testing.T) {
	s, dir, r := newRepo(t, 2)
	head := mustParse(t, s.Git(dir, "rev-parse", "HEAD"))
	mine := errors.New("rsl: entry 3: bad")
	fn := func(*Commit) error { return mine }
	for name, read := range map[string]func() error{
		"git":        func() error { return r.ReadCommitsInto([]Hash{head}, nil, fn) },
		"in process": func() error { return r.ReadCommitsInProcess([]Hash{head}, nil, fn) },
	} {
		if err := read(); err != mine {
			t.Errorf("%s: callback error came back as %v", name, err)
		}
	}
}
