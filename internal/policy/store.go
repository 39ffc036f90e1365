package policy

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Reader reads the objects of a policy commit; *gitrepo.Repo satisfies it.
type Reader interface {
	ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error)
	ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error)
	ReadObject(h gitrepo.Hash, maxSize int64) (string, []byte, error)
}

// Load reads and parses the policy held by commit h. The commit's tree must
// hold exactly root.json and targets.json as regular files.
func Load(r Reader, h gitrepo.Hash) (*Policy, error) {
	c, err := r.ReadCommit(h)
	if err != nil {
		return nil, fmt.Errorf("policy: read commit %s: %w", h, err)
	}
	entries, err := r.ReadTree(c.Tree)
	if err != nil {
		return nil, fmt.Errorf("policy: read tree of %s: %w", h, err)
	}
	if len(entries) != 2 {
		return nil, fmt.Errorf("%w: policy commit %s must hold exactly %s and %s", ErrMalformed, h, RootFile, TargetsFile)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.Mode != 0o100644 || (e.Name != RootFile && e.Name != TargetsFile) {
			return nil, fmt.Errorf("%w: policy commit %s holds unexpected %s", ErrMalformed, h, e.Name)
		}
		typ, data, err := r.ReadObject(e.Hash, MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("policy: read %s of %s: %w", e.Name, h, err)
		}
		if typ != "blob" {
			return nil, fmt.Errorf("%w: %s of %s is a %s", ErrMalformed, e.Name, h, typ)
		}
		files[e.Name] = data
	}
	p, err := Parse(files[RootFile], files[TargetsFile])
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", h, err)
	}
	return p, nil
}

// Writer stores objects; *gitrepo.Repo satisfies it.
type Writer interface {
	WriteObject(typ string, data []byte) (gitrepo.Hash, error)
	WriteTree(entries []gitrepo.TreeEntry) (gitrepo.Hash, error)
}

// Save writes p as a policy commit on top of parent (zero for none) and
// returns its hash. It does not move any ref.
func Save(w Writer, p *Policy, parent gitrepo.Hash, who gitrepo.Ident, message string) (gitrepo.Hash, error) {
	root, targets, err := p.Encode()
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	rh, err := w.WriteObject("blob", root)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("policy: write %s: %w", RootFile, err)
	}
	th, err := w.WriteObject("blob", targets)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("policy: write %s: %w", TargetsFile, err)
	}
	tree, err := w.WriteTree([]gitrepo.TreeEntry{
		{Mode: 0o100644, Name: RootFile, Hash: rh},
		{Mode: 0o100644, Name: TargetsFile, Hash: th},
	})
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("policy: write tree: %w", err)
	}
	var parents []gitrepo.Hash
	if !parent.IsZero() {
		parents = []gitrepo.Hash{parent}
	}
	if !strings.HasSuffix(message, "\n") {
		message += "\n"
	}
	raw := gitrepo.EncodeCommit(tree, parents, who, who, message)
	h, err := w.WriteObject("commit", raw)
	if err != nil {
		return gitrepo.ZeroHash, fmt.Errorf("policy: write commit: %w", err)
	}
	return h, nil
}
