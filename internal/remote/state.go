package remote

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

// The helper remembers, per remote, the refs the remote had at the last
// contact (a fetch, or a push it made, with the values it pushed), so that
// "list for-push" can answer without a round trip to the remote: over git
// daemon or HTTP that round trip costs as much as half a push.
//
// Answering from memory is safe because nothing is decided on it: the push
// itself is atomic and never forced beyond what the user asked, so a server
// that moved meanwhile refuses it (a branch: "fetch first", as with plain
// git; the log: the helper fetches, verifies, records on top and retries),
// and a failed push forgets the memory so that the next one lists the
// remote. The cost of a stale memory is cosmetic, with one exception: a
// branch someone else deleted or rewound on the remote since the last
// contact, that you push unchanged, is reported "up to date" (as plain git
// would with a stale remote-tracking ref) until the next fetch. Set
// secure.pushListing = remote to always ask the remote.

// maxStateSize bounds a remembered listing (about 300 000 refs).
const maxStateSize = 32 << 20

// remoteState is a remote's refs and HEAD as of the last contact.
type remoteState struct {
	Head string
	Refs map[string]gitrepo.Hash
	// Until is, for a verified state, when the policy it was verified
	// under first expires; zero for a listing (and then a verified state
	// is not used).
	Until time.Time
}

func (h *Helper) statePath() string {
	return filepath.Join(h.Repo.Git.GitDir(), "secure", "remotes", url.PathEscape(h.Remote))
}

// verifiedStatePath holds the remote's refs as of the last fetch that
// verified them (only a fetch writes it; pushes and listings do not).
func (h *Helper) verifiedStatePath() string {
	return filepath.Join(h.Repo.Git.GitDir(), "secure", "remotes-verified", url.PathEscape(h.Remote))
}

// loadState reads the remembered listing; any problem means "none".
func (h *Helper) loadState() (*remoteState, bool) {
	return h.loadStateFrom(h.statePath(), h.URL)
}

// loadStateFrom reads a remembered state file written for key (the URL,
// and for a verified state what it was verified under); any problem means
// "none".
func (h *Helper) loadStateFrom(path, key string) (*remoteState, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateSize+1))
	if err != nil || len(data) > maxStateSize {
		return nil, false
	}
	st, err := parseState(data, key)
	if err != nil {
		return nil, false
	}
	return st, true
}

// urlKey names a URL without writing it (it may hold credentials).
func urlKey(u string) string {
	sum := sha256.Sum256([]byte(u))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// parseState reads "url <key>\nhead <ref>\n", an optional "until <unix
// seconds>" line, then "<hash> <ref>" lines. A
// listing remembered for another URL (the remote was repointed) is not
// used.
func parseState(data []byte, wantURL string) (*remoteState, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	st := &remoteState{Refs: map[string]gitrepo.Hash{}}
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		switch {
		case line == 1:
			if text != "url "+urlKey(wantURL) {
				return nil, errors.New("remembered for another url")
			}
		case line == 2:
			head, ok := strings.CutPrefix(text, "head ")
			if !ok || (head != "" && gitrepo.ValidRefName(head) != nil) {
				return nil, fmt.Errorf("bad head line %q", text)
			}
			st.Head = head
		case line == 3 && strings.HasPrefix(text, "until "):
			sec, err := strconv.ParseInt(strings.TrimPrefix(text, "until "), 10, 64)
			if err != nil || sec <= 0 {
				return nil, fmt.Errorf("bad until line %q", text)
			}
			st.Until = time.Unix(sec, 0).UTC()
		default:
			hexHash, name, ok := strings.Cut(text, " ")
			// HEAD is the one name outside refs/ that ls-remote lists (a
			// server whose HEAD points at a branch): without it no listing
			// of an ordinary server would ever be used.
			if !ok || (name != "HEAD" && gitrepo.ValidRefName(name) != nil) {
				return nil, fmt.Errorf("bad line %d", line)
			}
			hash, err := gitrepo.ParseHash(hexHash)
			if err != nil || hash.IsZero() {
				return nil, fmt.Errorf("bad line %d", line)
			}
			st.Refs[name] = hash
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if line < 2 {
		return nil, errors.New("truncated")
	}
	return st, nil
}

func (st *remoteState) encode(remoteURL string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "url %s\nhead %s\n", urlKey(remoteURL), st.Head)
	if !st.Until.IsZero() {
		fmt.Fprintf(&b, "until %d\n", st.Until.Unix())
	}
	names := make([]string, 0, len(st.Refs))
	for n := range st.Refs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "%s %s\n", st.Refs[n], n)
	}
	return b.Bytes()
}

// saveState remembers refs (and HEAD) as the remote's current listing.
// Best effort: failing only costs the next push a round trip. Remotes
// without a git-secure log are not remembered: the helper writes nothing
// into repositories that do not use git-secure.
func (h *Helper) saveState(refs map[string]gitrepo.Hash, head string) {
	if refs[rsl.Ref].IsZero() {
		h.forgetState()
		return
	}
	writeState(h.statePath(), h.URL, &remoteState{Head: head, Refs: refs})
}

// saveVerified remembers refs (and HEAD) as what a fetch just verified,
// under the configuration it was verified with (verifiedKey), until the
// policy it was verified under expires (until). A zero until (a verdict
// that must be made anew at every fetch: a freshness statement's age)
// remembers nothing.
func (h *Helper) saveVerified(refs map[string]gitrepo.Hash, head string, until time.Time) {
	key, ok := h.verifiedKey()
	if !ok || refs[rsl.Ref].IsZero() || until.IsZero() {
		_ = os.Remove(h.verifiedStatePath())
		return
	}
	writeState(h.verifiedStatePath(), key, &remoteState{Head: head, Refs: refs, Until: until})
}

// verifiedKey names the URL and every secure.* setting (root key pin,
// required freshness, shallow history...): a verified state remembered
// under other settings is not used, since they may change the verdict.
func (h *Helper) verifiedKey() (string, bool) {
	cfg, err := h.Repo.Git.ConfigList()
	if err != nil {
		return "", false
	}
	sum := sha256.New()
	for _, e := range cfg {
		if strings.HasPrefix(strings.ToLower(e.Key), "secure.") {
			fmt.Fprintf(sum, "%q=%q/%v\n", e.Key, e.Value, e.NoValue)
		}
	}
	return h.URL + "\x00" + hex.EncodeToString(sum.Sum(nil)), true
}

// writeState replaces the state file path (best effort: a failure only
// costs a round trip or a verification later).
func writeState(path, remoteURL string, st *remoteState) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	if err := os.WriteFile(tmp, st.encode(remoteURL), 0o644); err != nil {
		_ = os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
	}
}

// forgetState drops the remembered listing, so that the next push asks the
// remote.
func (h *Helper) forgetState() { _ = os.Remove(h.statePath()) }

// maxInflightSize bounds the in-flight note read back.
const maxInflightSize = 1 << 20

// inflightPath is where the helper notes what a push sends, from just
// before it sends it until it succeeded: a note left behind means a push
// whose outcome this clone never learned (the helper was killed, or the
// server died while committing it).
func (h *Helper) inflightPath() string { return h.statePath() + ".inflight" }

// noteInflight writes "<hash> <ref>" for every ref the push sets.
func (h *Helper) noteInflight(specs []pushSpec) {
	var b strings.Builder
	for _, s := range specs {
		if !s.New.IsZero() {
			fmt.Fprintf(&b, "%s %s\n", s.New, s.Ref)
		}
	}
	path := h.inflightPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		_ = os.WriteFile(path, []byte(b.String()), 0o644) // a torn note reads as none
	}
}

func (h *Helper) clearInflight() { _ = os.Remove(h.inflightPath()) }

// loadInflight reads the note; anything malformed reads as no note.
func (h *Helper) loadInflight() map[string]gitrepo.Hash {
	f, err := os.Open(h.inflightPath())
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxInflightSize+1))
	if err != nil || len(data) > maxInflightSize {
		return nil
	}
	out := map[string]gitrepo.Hash{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		hs, ref, ok := strings.Cut(line, " ")
		hash, err := gitrepo.ParseHash(hs)
		if !ok || err != nil || gitrepo.ValidRefName(ref) != nil {
			return nil
		}
		out[ref] = hash
	}
	return out
}
