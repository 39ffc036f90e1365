package gitrepo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// HistoryFile is a file that makes git read history other than the commit
// objects say: a graft file gives commits other parents, a shallow file
// cuts history at the commits it lists. git honours both in every command
// (log, merge-base, rev-list, pack-objects, so in what a server sends).
type HistoryFile struct {
	Kind string // "grafts" or "shallow"
	Path string
	// Env names the environment variable that gave Path (receive-pack sets
	// GIT_SHALLOW_FILE for its hooks during a push from a shallow clone
	// when receive.shallowUpdate is on), "" for the default place.
	Env string
}

// HistoryFiles returns the graft and shallow files git would read in this
// repository, those that exist (even empty: git still reads them). The
// environment's GIT_GRAFT_FILE and GIT_SHALLOW_FILE replace the default
// places (info/grafts, shallow in the common directory), as they do for git.
// An error other than "does not exist" is returned: the caller cannot tell
// whether git reads the file.
func (r *Repo) HistoryFiles() ([]HistoryFile, error) {
	var out []HistoryFile
	for _, f := range []struct{ kind, env, def string }{
		{"grafts", "GIT_GRAFT_FILE", filepath.Join("info", "grafts")},
		{"shallow", "GIT_SHALLOW_FILE", "shallow"},
	} {
		path, env := envValue(r.env, f.env), f.env
		if path == "" {
			env = ""
			path = filepath.Join(r.commonDir, f.def)
		} else if !filepath.IsAbs(path) {
			path = filepath.Join(r.dir, path) // git resolves it from its working directory
		}
		if _, err := os.Lstat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, wrapf(err, "read %s file %s", f.kind, path)
		}
		out = append(out, HistoryFile{Kind: f.kind, Path: path, Env: env})
	}
	return out, nil
}
