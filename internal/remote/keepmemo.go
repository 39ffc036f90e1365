package remote

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// Which keep refs a fetch takes (rsl.KeepRefPrefix): only those whose
// commit the verified log records as a ref's state (fe72259). A keep ref
// taken is local from then on and never looked up again; one the log does
// not record stays on the remote, and the lookup walked the whole log for
// it on every fetch (10 000 entries: every fetch of a remote serving junk
// keep refs). The fetch now remembers the states it found recorded
// nowhere and the log tip it searched (secure/keep-unrecorded in the git
// directory): the log only grows, so the next fetch looks for them only in
// the entries after that tip (rsl.FindRecordedAfter); a first fetch, whose
// verification replays the whole log, asks that replay (FindStates) and
// reads nothing more. The file is a cache
// that can only make a fetch take fewer keep refs, never one the log does
// not record: a missing, damaged or foreign one costs one whole walk.

// maxKeepMemo bounds the states the file remembers (a remote may serve any
// number of junk keep refs; those past the bound are searched in full).
const maxKeepMemo = 100_000

func keepMemoPath(gitDir string) string {
	return filepath.Join(gitDir, "secure", "keep-unrecorded")
}

// loadKeepMemo reads the remembered log tip and the states the log up to
// it does not record; anything unreadable is nothing remembered.
func loadKeepMemo(gitDir string) (gitrepo.Hash, map[gitrepo.Hash]bool) {
	data, err := os.ReadFile(keepMemoPath(gitDir))
	if err != nil {
		return gitrepo.ZeroHash, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() {
		return gitrepo.ZeroHash, nil
	}
	tipHex, ok := strings.CutPrefix(sc.Text(), "tip ")
	tip, err := gitrepo.ParseHash(tipHex)
	if !ok || err != nil {
		return gitrepo.ZeroHash, nil
	}
	states := map[gitrepo.Hash]bool{}
	for sc.Scan() && len(states) < maxKeepMemo {
		h, err := gitrepo.ParseHash(sc.Text())
		if err != nil {
			return gitrepo.ZeroHash, nil
		}
		states[h] = true
	}
	return tip, states
}

// saveKeepMemo remembers that the log at tip records none of states.
func saveKeepMemo(gitDir string, tip gitrepo.Hash, states map[gitrepo.Hash]bool) error {
	path := keepMemoPath(gitDir)
	if len(states) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	hs := make([]string, 0, len(states))
	for h := range states {
		hs = append(hs, h.String())
	}
	slices.Sort(hs)
	if len(hs) > maxKeepMemo {
		hs = hs[:maxKeepMemo]
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "tip %s\n", tip)
	for _, h := range hs {
		b.WriteString(h + "\n")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// recordedKeeps returns those of keeps (commits the remote serves keep refs
// for) that the log at tip records as a ref's state, reading only the
// entries it must (see above). res is the verification of that log, whose
// replay looked for keeps (verify.Options.FindStates; nil when none): what
// it found is taken, and when it read the whole log (a first fetch) the
// log is not read again.
func recordedKeeps(g *gitrepo.Repo, tip gitrepo.Hash, keeps map[gitrepo.Hash]bool, res *verify.Result) (map[gitrepo.Hash]bool, error) {
	var found map[gitrepo.Hash]bool
	if res != nil && res.Tip == tip && res.StatesComplete {
		found = map[gitrepo.Hash]bool{}
		for h := range keeps {
			if res.FoundStates[h] {
				found[h] = true
			}
		}
	} else {
		knownTip, known := loadKeepMemo(g.GitDir())
		var err error
		if found, err = rsl.FindRecordedAfter(g, tip, keeps, knownTip, known); err != nil {
			return nil, err
		}
	}
	unrecorded := map[gitrepo.Hash]bool{}
	for h := range keeps {
		if !found[h] {
			unrecorded[h] = true
		}
	}
	if knownTip, known := loadKeepMemo(g.GitDir()); knownTip != tip || !sameSet(known, unrecorded) {
		_ = saveKeepMemo(g.GitDir(), tip, unrecorded) // a cache: failing costs one whole walk next time
	}
	return found, nil
}

func sameSet(a, b map[gitrepo.Hash]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for h := range a {
		if !b[h] {
			return false
		}
	}
	return true
}
