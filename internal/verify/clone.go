package verify

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

// What a working clone verifies.
//
// A bare repository's refs are the shared state: they are what it serves,
// and verification judges every one of them strictly. A clone with a work
// tree holds two things: what its remote serves, as the last fetch left it
// in the remote-tracking refs, and the owner's own work (branches ahead,
// behind or new, tags made by hand). Only the first is shared, so only the
// first is judged: the remote-tracking refs are mapped back through the
// remote's fetch refspecs to the remote's ref names (refs/remotes/origin/x
// is the remote's refs/heads/x) and compared with the log as strictly as a
// server's refs. The clone's own branches and tags are reported, never
// failed, with one exception that fails closed: fetched tags land in
// refs/tags/ directly, where nothing tells them from the owner's, so a tag
// that the log records is judged at its local value; a tag the log never
// recorded is the owner's (name it as a REF argument to judge it anyway).

// TrackedRef is one remote-tracking ref, mapped back to the remote's ref.
type TrackedRef struct {
	Ref      string       // the remote's ref (refs/heads/main)
	Tracking string       // the local ref the fetch stored it in (refs/remotes/origin/main)
	Hash     gitrepo.Hash // its value
}

// CloneState is what verification judges in a clone with a work tree: the
// refs its remote served at the last fetch, and its own refs, only
// reported.
type CloneState struct {
	// Remote is the remote whose state is judged.
	Remote string
	// Tracked are the remote's refs as the remote-tracking refs hold them.
	// One remote ref may appear more than once (two refspecs store it
	// twice) and one tracking ref more than once (two refspecs map
	// different remote refs onto it): each is judged.
	Tracked []TrackedRef
	// Fetch are the remote's fetch refspecs: a recorded ref that one of
	// them covers but no remote-tracking ref holds is one the remote no
	// longer serves.
	Fetch gitrepo.Refspecs
	// Local are the clone's own refs that the log may record (branches,
	// tags, notes; not remote-tracking refs, not refs a refspec fetches
	// into).
	Local map[string]gitrepo.Hash
	// Unmapped are refs under refs/remotes/<Remote>/ that no refspec maps
	// (left by an older, wider refspec): stale, not judged.
	Unmapped []gitrepo.Ref
	// PushedTip is the remote's log as git-remote-secure last verified it
	// (remote.<name>.securetip, read only while remote.<name>.vcs =
	// secure), zero if unknown. Entries after it are
	// local, not pushed yet: the remote's refs may still be at the state
	// before them.
	PushedTip gitrepo.Hash
}

// ErrNoRemote is returned by ChooseRemote when the clone has no remote.
var ErrNoRemote = errors.New("verify: the repository has no remote")

// Remotes lists the configured remotes (those with a url or a fetch
// refspec), sorted.
func Remotes(repo *gitrepo.Repo) ([]string, error) {
	cfg, err := repo.ConfigList()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range cfg {
		rest, ok := strings.CutPrefix(e.Key, "remote.")
		if !ok {
			continue
		}
		i := strings.LastIndexByte(rest, '.')
		if i <= 0 {
			continue
		}
		if v := rest[i+1:]; v == "url" || v == "fetch" {
			seen[rest[:i]] = true
		}
	}
	out := make([]string, 0, len(seen))
	for r := range seen {
		out = append(out, r)
	}
	sort.Strings(out)
	return out, nil
}

// ChooseRemote picks the remote whose state a working clone judges: the
// one named (it must exist), else the one a plain git fetch would use (the
// checked-out branch's upstream remote, else origin), else the only
// remote. It returns ErrNoRemote when there is none and an error naming
// the remotes when several leave the choice open.
func ChooseRemote(repo *gitrepo.Repo, named string) (string, error) {
	remotes, err := Remotes(repo)
	if err != nil {
		return "", err
	}
	has := func(r string) bool {
		i := sort.SearchStrings(remotes, r)
		return i < len(remotes) && remotes[i] == r
	}
	if named != "" {
		if !has(named) {
			return "", fmt.Errorf("verify: no remote %q (remotes: %s)", named, listOrNone(remotes))
		}
		return named, nil
	}
	if len(remotes) == 0 {
		return "", ErrNoRemote
	}
	if head, err := repo.SymbolicRef("HEAD"); err == nil {
		if b, ok := strings.CutPrefix(head, "refs/heads/"); ok {
			if up, ok, err := repo.ConfigValue("branch." + b + ".remote"); err == nil && ok && has(up) {
				return up, nil
			}
		}
	}
	if has("origin") {
		return "origin", nil
	}
	if len(remotes) == 1 {
		return remotes[0], nil
	}
	return "", fmt.Errorf("verify: several remotes (%s) and none is the upstream or origin: name one with --remote", listOrNone(remotes))
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// LoadCloneState reads what a verification of a working clone judges for
// remote: its fetch refspecs, the refs they stored, and the clone's own
// refs. A fetch refspec it cannot map back exactly is an error (it would
// not know what the remote served).
func LoadCloneState(repo *gitrepo.Repo, remote string) (*CloneState, error) {
	cfg, err := repo.ConfigList()
	if err != nil {
		return nil, err
	}
	st := &CloneState{Remote: remote, Local: map[string]gitrepo.Hash{}}
	for _, e := range cfg {
		if e.Key != "remote."+remote+".fetch" || e.NoValue {
			continue
		}
		spec, err := gitrepo.ParseFetchRefspec(e.Value)
		if err != nil {
			return nil, fmt.Errorf("verify: remote.%s.fetch: %w; write the refspec with full ref names on both sides", remote, err)
		}
		st.Fetch = append(st.Fetch, spec)
	}
	if !st.anyFetch() {
		// Nothing it serves would be known, so nothing would be judged.
		return nil, fmt.Errorf("verify: remote %s has no fetch refspec (remote.%s.fetch), so what it serves is unknown: add one (git config remote.%s.fetch '+refs/heads/*:refs/remotes/%s/*') and fetch", remote, remote, remote, remote)
	}
	// The remembered tip says which entries the remote has only while
	// git-remote-secure carries every fetch (it moves the tip with the
	// log); after the helper is removed, a log fetched by hand would run
	// past it and make a rollback to its state look like unpushed work.
	if vcs, _, err := repo.ConfigValue("remote." + remote + ".vcs"); err == nil && vcs == "secure" {
		if tip, ok, err := repo.ConfigValue("remote." + remote + ".securetip"); err == nil && ok {
			if h, err := gitrepo.ParseHash(tip); err == nil {
				st.PushedTip = h
			}
		}
	}
	refs, err := repo.ListRefs("refs/")
	if err != nil {
		return nil, err
	}
	trackingHead := "refs/remotes/" + remote + "/HEAD"
	for _, r := range refs {
		if r.Name == trackingHead {
			// git's pointer at the remote's default branch, normally a
			// symbolic ref; a real ref of that name is judged like any.
			if _, err := repo.SymbolicRef(r.Name); err == nil {
				continue
			}
		}
		mapped := st.track(r)
		if !mapped && strings.HasPrefix(r.Name, "refs/remotes/"+remote+"/") {
			st.Unmapped = append(st.Unmapped, r)
		}
		if !mapped && r.Name != rsl.PolicyRef && rsl.ValidateRecordedRef(r.Name) == nil {
			st.Local[r.Name] = r.Hash
		}
	}
	return st, nil
}

// track records r as the remote's state for every refspec that fetches
// into it; it reports whether any does.
func (st *CloneState) track(r gitrepo.Ref) bool {
	mapped := false
	for _, spec := range st.Fetch {
		src, ok := spec.SrcOf(r.Name)
		if !ok || st.Fetch.Excluded(src) {
			continue
		}
		mapped = true
		st.Tracked = append(st.Tracked, TrackedRef{Ref: src, Tracking: r.Name, Hash: r.Hash})
	}
	return mapped
}

// anyFetch reports whether some refspec stores what it fetches.
func (st *CloneState) anyFetch() bool {
	for _, spec := range st.Fetch {
		if !spec.Negative {
			return true
		}
	}
	return false
}

// Covers reports whether a fetch from the remote stores ref somewhere: a
// recorded ref it covers that no remote-tracking ref holds is a ref the
// remote did not serve.
func (st *CloneState) Covers(ref string) bool { return st.Fetch.Covers(ref) }
