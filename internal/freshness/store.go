package freshness

import (
	"bytes"
	"fmt"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// ident is the fixed author and committer of statement commits: the
// commit carries no trust (the statement's own signatures do).
var ident = gitrepo.Ident{Name: "git-secure", Email: "git-secure@localhost"}

// Reader reads statement commits and the log they vouch for;
// *gitrepo.Repo satisfies it.
type Reader interface {
	ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error)
	ReadTree(h gitrepo.Hash) ([]gitrepo.TreeEntry, error)
	ReadBlobAt(tree gitrepo.Hash, path string, maxSize int64) ([]byte, error)
	IsAncestor(a, b gitrepo.Hash) (bool, error)
}

// Read returns the statement held by the statement commit h (the value of
// Ref): a commit without parents whose tree holds File. Errors wrap
// ErrMalformed for what cannot be read as a statement.
func Read(repo Reader, h gitrepo.Hash) (*Signed, error) {
	c, err := repo.ReadCommit(h)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrMalformed, Ref, h, err)
	}
	if len(c.Parents) != 0 {
		return nil, fmt.Errorf("%w: %s %s: a statement commit has no parents", ErrMalformed, Ref, h)
	}
	entries, err := repo.ReadTree(c.Tree)
	if err != nil || len(entries) != 1 || entries[0].Name != File || entries[0].Mode != gitrepo.ModeFile {
		return nil, fmt.Errorf("%w: %s %s: the tree must hold exactly the file %s", ErrMalformed, Ref, h, File)
	}
	data, err := repo.ReadBlobAt(c.Tree, File, MaxSize)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrMalformed, Ref, h, err)
	}
	sd, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", Ref, h, err)
	}
	// The wrapper carries no trust, but whatever a pusher may put in it
	// (a 1 MB message, another author) every client would fetch and keep:
	// only the exact commit Write makes for this statement is read.
	if !bytes.Equal(c.Raw, wrapper(c.Tree, sd.Statement)) {
		return nil, fmt.Errorf("%w: %s %s: the statement commit must be exactly the one git secure timestamp sign writes (author and committer %s, dated the statement's time, message %q)", ErrMalformed, Ref, h, ident.Name+" <"+ident.Email+">", message(sd.Statement))
	}
	return sd, nil
}

// wrapper is the statement commit of tree for st.
func wrapper(tree gitrepo.Hash, st Statement) []byte {
	who := ident
	who.When = st.Time.UTC().Truncate(time.Second)
	return gitrepo.EncodeCommit(tree, nil, who, who, message(st))
}

func message(st Statement) string {
	return fmt.Sprintf("timestamp: log tip %s at %s\n", st.Tip, stamp(st.Time))
}

// Write stores the statement file data as a statement commit and returns
// it; it does not move Ref.
func Write(repo *gitrepo.Repo, data []byte, st Statement) (gitrepo.Hash, error) {
	blob, err := repo.WriteObject("blob", data)
	if err != nil {
		return gitrepo.Hash{}, fmt.Errorf("freshness: write statement: %w", err)
	}
	tree, err := repo.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeFile, Name: File, Hash: blob}})
	if err != nil {
		return gitrepo.Hash{}, fmt.Errorf("freshness: write statement: %w", err)
	}
	h, err := repo.WriteObject("commit", wrapper(tree, st))
	if err != nil {
		return gitrepo.Hash{}, fmt.Errorf("freshness: write statement: %w", err)
	}
	return h, nil
}
