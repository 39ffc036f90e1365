package policy

import (
	"errors"
	"fmt"
	"sort"
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
// hold exactly root.json and targets.json as regular files, and, when
// targets.json delegates, a directory rules/ of rule files NAME.json. It
// checks no signature: it reads a staged change, which is unsigned until
// it is applied, so it runs CheckStaged's cheap checks (linear in the
// files' size) before go-tuf decodes anything. A policy that must be
// signed is read with LoadSigned.
func Load(r Reader, h gitrepo.Hash) (*Policy, error) {
	root, targets, ruleFiles, err := readFiles(r, h)
	if err != nil {
		return nil, err
	}
	if err := checkStagedFiles(root, targets, ruleFiles); err != nil {
		return nil, fmt.Errorf("policy %s: %w", h, err)
	}
	p, err := ParseFiles(root, targets, ruleFiles)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", h, err)
	}
	return p, nil
}

// LoadSigned is Load for a policy that must be signed (one in force, or
// recorded in the log): ParseSigned checks the signatures of each file
// before decoding it, the root's against prev's root keys when prev is
// not nil. A file refused for its signatures wraps ErrUnsigned.
func LoadSigned(r Reader, h gitrepo.Hash, prev *Policy) (*Policy, error) {
	root, targets, ruleFiles, err := readFiles(r, h)
	if err != nil {
		return nil, err
	}
	p, err := ParseSigned(prev, root, targets, ruleFiles)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", h, err)
	}
	return p, nil
}

// readFiles reads the files of policy commit h (Load).
func readFiles(r Reader, h gitrepo.Hash) (root, targets []byte, ruleFiles map[string][]byte, err error) {
	c, err := r.ReadCommit(h)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("policy: read commit %s: %w", h, err)
	}
	entries, err := r.ReadTree(c.Tree)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("policy: read tree of %s: %w", h, err)
	}
	if len(entries) == 3 {
		for i, e := range entries {
			if e.Name == RulesDir && e.Mode == 0o040000 {
				if ruleFiles, err = loadRuleFiles(r, h, e.Hash); err != nil {
					return nil, nil, nil, err
				}
				entries = append(entries[:i:i], entries[i+1:]...)
				break
			}
		}
	}
	if len(entries) != 2 {
		return nil, nil, nil, fmt.Errorf("%w: policy commit %s must hold exactly %s and %s (and %s/)", ErrMalformed, h, RootFile, TargetsFile, RulesDir)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.Mode != 0o100644 || (e.Name != RootFile && e.Name != TargetsFile) {
			return nil, nil, nil, fmt.Errorf("%w: policy commit %s holds unexpected %s", ErrMalformed, h, e.Name)
		}
		limit := int64(MaxFileSize)
		if e.Name == TargetsFile {
			limit = MaxTargetsSize
		}
		typ, data, err := r.ReadObject(e.Hash, limit)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("policy: read %s of %s: %w", e.Name, h, err)
		}
		if typ != "blob" {
			return nil, nil, nil, fmt.Errorf("%w: %s of %s is a %s", ErrMalformed, e.Name, h, typ)
		}
		files[e.Name] = data
	}
	return files[RootFile], files[TargetsFile], ruleFiles, nil
}

// loadRuleFiles reads the rule files of policy commit h from tree t: only
// regular files NAME.json, at most MaxRuleFiles, each at most MaxFileSize
// and all together at most MaxRuleFilesSize, each a blob of its own (a
// file names itself, so no two valid files are the same blob). It stops
// at the first file beyond, before reading the rest: a staged change
// anyone may push is read by every clone, and 1000 entries naming one
// blob of 1 MiB cost its pusher a few kilobytes.
func loadRuleFiles(r Reader, h, t gitrepo.Hash) (map[string][]byte, error) {
	entries, err := r.ReadTree(t)
	if err != nil {
		return nil, fmt.Errorf("policy: read %s/ of %s: %w", RulesDir, h, err)
	}
	if len(entries) == 0 || len(entries) > MaxRuleFiles {
		return nil, fmt.Errorf("%w: policy commit %s: %s/ must hold 1 to %d rule files", ErrMalformed, h, RulesDir, MaxRuleFiles)
	}
	out := make(map[string][]byte, len(entries))
	seen := make(map[gitrepo.Hash]string, len(entries))
	left := int64(MaxRuleFilesSize)
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name, ".json")
		if e.Mode != 0o100644 || !ok || !validName(name) {
			return nil, fmt.Errorf("%w: policy commit %s holds unexpected %s/%s", ErrMalformed, h, RulesDir, e.Name)
		}
		if other, dup := seen[e.Hash]; dup {
			return nil, fmt.Errorf("%w: policy commit %s: %s/%s is the same blob as %s/%s (a rule file names itself: no two can be the same)", ErrMalformed, h, RulesDir, e.Name, RulesDir, other)
		}
		seen[e.Hash] = e.Name
		limit := min(int64(MaxFileSize), left)
		typ, data, err := r.ReadObject(e.Hash, limit)
		if errors.Is(err, gitrepo.ErrTooLarge) && limit < MaxFileSize {
			return nil, fmt.Errorf("%w: policy commit %s: its rule files hold more than %d bytes together (%s/%s is beyond)", ErrMalformed, h, MaxRuleFilesSize, RulesDir, e.Name)
		}
		if err != nil {
			return nil, fmt.Errorf("policy: read %s/%s of %s: %w", RulesDir, e.Name, h, err)
		}
		left -= int64(len(data))
		if typ != "blob" {
			return nil, fmt.Errorf("%w: %s/%s of %s is a %s", ErrMalformed, RulesDir, e.Name, h, typ)
		}
		out[name] = data
	}
	return out, nil
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
	entries := []gitrepo.TreeEntry{
		{Mode: 0o100644, Name: RootFile, Hash: rh},
		{Mode: 0o100644, Name: TargetsFile, Hash: th},
	}
	ruleFiles, err := p.EncodeRuleFiles()
	if err != nil {
		return gitrepo.ZeroHash, err
	}
	if len(ruleFiles) > 0 {
		names := make([]string, 0, len(ruleFiles))
		for name := range ruleFiles {
			names = append(names, name)
		}
		sort.Strings(names)
		var sub []gitrepo.TreeEntry
		for _, name := range names {
			bh, err := w.WriteObject("blob", ruleFiles[name])
			if err != nil {
				return gitrepo.ZeroHash, fmt.Errorf("policy: write %s/%s.json: %w", RulesDir, name, err)
			}
			sub = append(sub, gitrepo.TreeEntry{Mode: 0o100644, Name: name + ".json", Hash: bh})
		}
		sh, err := w.WriteTree(sub)
		if err != nil {
			return gitrepo.ZeroHash, fmt.Errorf("policy: write %s/: %w", RulesDir, err)
		}
		entries = append(entries, gitrepo.TreeEntry{Mode: 0o040000, Name: RulesDir, Hash: sh})
	}
	tree, err := w.WriteTree(entries)
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
