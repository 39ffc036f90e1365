package fastpath

import (
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// EnvOff, set to anything but "" or "0" in the environment a repository
// is opened with, turns every reader of this package off: Open returns
// nil, and gitrepo asks git for everything.
const EnvOff = "GIT_SECURE_NO_FASTPATH"

// EnvOffOld is EnvOff's first name, still honoured.
const EnvOffOld = "GIT_SECURE_NO_INPROCESS"

// Off reports whether env turns the readers off (EnvOff or EnvOffOld).
// It is the only switch: every reader hangs off the *Repo that Open
// returns only when Off is false.
func Off(env []string) bool {
	for _, k := range []string{EnvOff, EnvOffOld} {
		if v, _ := LookupEnv(env, k); v != "" && v != "0" {
			return true
		}
	}
	return false
}

// ID is a SHA-1 object id (gitrepo.Hash converts to and from it).
type ID = [20]byte

// Options locate a repository git has already found (gitrepo.Open asked
// git rev-parse; gitrepo.OpenGitDir checked PlainLayout).
type Options struct {
	GitDir    string
	CommonDir string // GitDir unless a linked work tree
	// Env is the environment git runs with: it names the object
	// directories (a push's quarantine) and the configuration files.
	Env []string
	// FilesRefs: the repository keeps its refs in its own files ref store
	// (FilesRefStore), which ListRefs may read.
	FilesRefs bool
	// ValidRefName checks every ref name the ref readers return (and
	// every symbolic target they follow); a name it refuses sends the
	// listing to git.
	ValidRefName func(string) error
}

// Repo is the in-process readers of one repository. A nil *Repo is the
// switch turned off: every method answers "not here", and the caller asks
// git. It is safe for concurrent use.
type Repo struct {
	gitDir    string
	env       []string
	filesRefs bool
	validName func(string) error
	// looseDirs are searched for loose objects (and packs) in git's order.
	looseDirs []string
	// objectsDir is where WriteLoose writes; "" when the environment
	// redirects objects (quarantine, GIT_OBJECT_DIRECTORY): then git
	// hash-object writes them, into the quarantine.
	objectsDir string
	inflaters  sync.Pool // of *inflater
	packs      packSet   // opened on the first object read
}

// Open returns the readers of the repository o describes, or nil when
// o.Env turns them off (Off).
func Open(o Options) *Repo {
	if Off(o.Env) {
		return nil
	}
	f := &Repo{gitDir: o.GitDir, env: o.Env, filesRefs: o.FilesRefs, validName: o.ValidRefName}
	f.looseDirs = looseObjectDirs(o.CommonDir, o.Env)
	if v, _ := LookupEnv(o.Env, "GIT_OBJECT_DIRECTORY"); v == "" {
		if v, _ := LookupEnv(o.Env, "GIT_QUARANTINE_PATH"); v == "" {
			if st, err := os.Stat(filepath.Join(o.CommonDir, "objects")); err == nil && st.IsDir() {
				f.objectsDir = filepath.Join(o.CommonDir, "objects")
			}
		}
	}
	return f
}

// Close closes the pack files. A nil Repo has none.
func (f *Repo) Close() {
	if f != nil {
		f.packs.close()
	}
}

// LookupEnv is the last value of key in env (as exec uses it), and
// whether it is set at all.
func LookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// ObjectID is the id git gives data stored as an object of type typ.
func ObjectID(typ string, data []byte) ID {
	var in inflater
	return in.objectID(typ, data)
}

// parseID reads exactly 40 lowercase hex digits, as git writes ids.
func parseID(b []byte) (ID, bool) {
	var id ID
	if len(b) != 2*len(id) {
		return id, false
	}
	_, err := hex.Decode(id[:], b)
	return id, err == nil && hex.EncodeToString(id[:]) == string(b)
}

// errTooBig is returned by readBounded for a file over its bound.
var errTooBig = errors.New("fastpath: file too large")

// readBounded reads a whole small file of the repository, refusing one
// larger than max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooBig
	}
	return data, nil
}
