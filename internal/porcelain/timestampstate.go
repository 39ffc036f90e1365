package porcelain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// TimestampStateConfig names the signer's state file (default: the key
// file's path plus ".state").
const TimestampStateConfig = "secure.timestampState"

// maxStateSize bounds the state file: one line per repository.
const maxStateSize = 1 << 20

// signerState is the freshness signer's memory, kept outside the
// repository (beside its key): for each repository (by the absolute path
// of its git directory) the last log tip it vouched for and when. A
// repository restored from its own backup comes back with its old
// statement; only this file remembers that the signer had vouched for
// more since.
type signerState struct {
	path    string
	repo    string
	entries map[string]stateEntry
}

type stateEntry struct {
	Tip  string `json:"tip"`
	Time string `json:"time"`
}

// openSignerState reads the state file of the signer of keyFile; nil
// (and no error) when no path can be told (no key file and no config).
// An unreadable file fails: the signer must not forget what it signed.
func (r *Repo) openSignerState(keyFile string) (*signerState, error) {
	path, ok, err := r.ConfigValue(TimestampStateConfig)
	if err != nil {
		return nil, err
	}
	if !ok || path == "" {
		if keyFile == "" {
			return nil, nil
		}
		path = keyFile + ".state"
	}
	if path == "~" || strings.HasPrefix(path, "~/") {
		path = filepath.Join(r.Home, strings.TrimPrefix(path, "~"))
	}
	repo, err := filepath.Abs(r.Git.GitDir())
	if err != nil {
		return nil, fmt.Errorf("timestamp state: %w", err)
	}
	if real, err := filepath.EvalSymlinks(repo); err == nil {
		repo = real
	}
	s := &signerState{path: path, repo: repo, entries: map[string]stateEntry{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("timestamp state %s: %w", path, err)
	case len(data) > maxStateSize:
		return nil, fmt.Errorf("timestamp state %s: more than %d bytes", path, maxStateSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s.entries); err != nil {
		return nil, fmt.Errorf("timestamp state %s: %v (it records what this signer vouched for; restore it, or move it away to start over)", path, err)
	}
	return s, nil
}

// check refuses to sign tip at time at when this signer vouched before
// for a log tip the log does not contain, or at a later time, unless
// allow (an administrator's deliberate restore).
func (s *signerState) check(g *gitrepo.Repo, tip gitrepo.Hash, at time.Time, allow bool) error {
	e, ok := s.entries[s.repo]
	if !ok || allow {
		return nil
	}
	last, err := gitrepo.ParseHash(e.Tip)
	if err != nil {
		return fmt.Errorf("timestamp state %s: repository %s: bad tip %.40q", s.path, s.repo, e.Tip)
	}
	if last != tip {
		if ok, err := g.IsAncestor(last, tip); err != nil || !ok {
			return fmt.Errorf("%w: this signer last vouched (at %s) for log tip %s of %s, which the log (tip %s) does not contain: the repository went back, perhaps restored from a backup; signing would present the old state as current. If the restore is deliberate, tell the users and sign with --allow-restored (the state is kept in %s)", ErrRefused, e.Time, last, s.repo, tip, s.path)
		}
	}
	if t, err := time.Parse(time.RFC3339, e.Time); err == nil && t.After(at) {
		return fmt.Errorf("%w: this signer already vouched for %s at %s, after %s (state %s)", ErrRefused, s.repo, e.Time, at.Format(time.RFC3339), s.path)
	}
	return nil
}

// save records tip at time at for the repository: written to a temporary
// file and renamed, so that a crash leaves the old or the new state.
func (s *signerState) save(tip gitrepo.Hash, at time.Time) error {
	s.entries[s.repo] = stateEntry{Tip: tip.String(), Time: at.UTC().Format(time.RFC3339)}
	data, err := json.MarshalIndent(s.entries, "", "  ")
	if err != nil {
		return fmt.Errorf("timestamp state: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(s.path), filepath.Base(s.path)+".tmp*")
	if err != nil {
		return fmt.Errorf("timestamp state %s: %w", s.path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("timestamp state %s: %w", s.path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("timestamp state %s: %w", s.path, err)
	}
	if err := os.Rename(tmp.Name(), s.path); err != nil {
		return fmt.Errorf("timestamp state %s: %w", s.path, err)
	}
	return nil
}
