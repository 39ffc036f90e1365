// Package org brings an organisation policy repository (policy.Org) into
// a repository that inherits it, and answers "which organisation policy is
// version N?". The organisation repository is an ordinary git-secure
// repository: it is fetched into a private bare repository under the git
// directory (secure/org/<hash of the URL>.git, never served nor pushed),
// verified as a whole (internal/verify) from the root keys the inheriting
// policy pins, and only then kept. A fetch whose log does not extend the
// one kept before (a server put back to an older snapshot, a rewritten
// log) is refused: a rolled-back organisation policy is detected.
package org

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// incoming is where a fetch lands in the cache before it is verified.
const incoming = "refs/incoming/"

// fetched are the organisation repository's namespaces the cache takes:
// its branches and tags (which its log records) and its metadata.
var fetched = []string{"refs/heads/", "refs/tags/", "refs/secure/"}

// ErrRollback is wrapped when the organisation's log went back or was
// rewritten since this repository last saw it.
var ErrRollback = errors.New("org: the organisation policy went back")

// ErrVersion is wrapped when an entry names an organisation policy
// version that the organisation's log does not hold.
var ErrVersion = errors.New("org: no such organisation policy version")

// Cache fetches, verifies and remembers organisation policies for one
// repository: each organisation is fetched once per Cache (with Kept, once
// more for a newer version), and a failure is remembered like a success.
// It is not safe for concurrent use.
type Cache struct {
	// GitDir is the git directory of the inheriting repository.
	GitDir string
	// Env is the environment of git processes.
	Env []string
	// Now is the reference time of the organisation's verification.
	Now time.Time
	// Offline uses the organisation repository as last fetched and
	// verified, without fetching (an audit without network, tests).
	Offline bool
	// SkipFreshness does not judge the organisation's freshness
	// statement (a server judging a push, as for its own log).
	SkipFreshness bool
	// Kept uses the organisation policy as last fetched, verified and
	// kept in the cache, without fetching or verifying it again, until a
	// version newer than the kept latest is asked for (PolicyAt, Need):
	// then it fetches and verifies it as without Kept. For a hook that
	// only asks which refs are protected, many times a minute, after the
	// push's own verification fetched the organisation's latest.
	Kept bool

	orgs map[string]*state
	// failed keeps why loading an organisation failed, so that a second
	// ask in the same process answers the same without fetching again
	// (a server's pre-receive hook asks up to three times per push).
	failed map[string]error
}

// state is an organisation repository verified in this process.
type state struct {
	repo     *gitrepo.Repo
	tip      gitrepo.Hash
	versions map[uint64]version // the policy entries of its log
	latest   rsl.OrgVersion
	kept     bool // read as kept, not fetched by this Cache (Cache.Kept)
}

type version struct {
	id     gitrepo.Hash
	commit gitrepo.Hash // the policy commit the entry put in force
}

// Dir is the cache repository of o under gitDir.
func Dir(gitDir string, o *policy.Org) string {
	sum := sha256.Sum256([]byte(o.URL))
	return filepath.Join(gitDir, "secure", "org", hex.EncodeToString(sum[:16])+".git")
}

// PolicyAt returns the organisation policy of version v: the policy that
// the entry v.Number (of ID v.ID) of the organisation's verified log put
// in force. It implements verify.OrgSource.
func (c *Cache) PolicyAt(o *policy.Org, v rsl.OrgVersion) (*policy.Policy, error) {
	st, err := c.need(o, v)
	if err != nil {
		return nil, err
	}
	got, ok := st.versions[v.Number]
	if !ok {
		if v.Number > st.latest.Number {
			return nil, fmt.Errorf("%w: version %d of %s is newer than its log's latest policy, version %d: the organisation policy went back, or this repository names a version that never existed", ErrVersion, v.Number, o.URL, st.latest.Number)
		}
		return nil, fmt.Errorf("%w: entry %d of the organisation log at %s is not a policy entry", ErrVersion, v.Number, o.URL)
	}
	if got.id != v.ID {
		return nil, fmt.Errorf("%w: the organisation log at %s has %s as entry %d, not %s: its log was rewritten, or this repository names another organisation's", ErrVersion, o.URL, got.id, v.Number, v.ID)
	}
	p, err := policy.LoadSigned(st.repo, got.commit, nil)
	if err != nil {
		return nil, fmt.Errorf("org: organisation policy version %d of %s: %w", v.Number, o.URL, err)
	}
	return p, nil
}

// Latest returns the newest organisation policy version: the version new
// entries record.
func (c *Cache) Latest(o *policy.Org) (rsl.OrgVersion, error) {
	st, err := c.load(o)
	if err != nil {
		return rsl.OrgVersion{}, err
	}
	return st.latest, nil
}

// Need makes sure the cache knows version v of o: with Kept, a version
// newer than the kept latest fetches the organisation repository (once).
func (c *Cache) Need(o *policy.Org, v rsl.OrgVersion) error {
	_, err := c.need(o, v)
	return err
}

func (c *Cache) need(o *policy.Org, v rsl.OrgVersion) (*state, error) {
	st, err := c.load(o)
	if err != nil || !st.kept || v.Number <= st.latest.Number {
		return st, err
	}
	delete(c.orgs, o.URL)
	st, err = c.loadFrom(o, false)
	if err != nil {
		c.fail(o, err)
	}
	return st, err
}

// load fetches (unless Offline, or Kept finds a kept policy) and verifies
// o's repository once per Cache.
func (c *Cache) load(o *policy.Org) (*state, error) {
	if st := c.orgs[o.URL]; st != nil {
		return st, nil
	}
	if err := c.failed[o.URL]; err != nil {
		return nil, err
	}
	st, err := c.loadFrom(o, c.Kept)
	if err != nil {
		c.fail(o, err)
	}
	return st, err
}

func (c *Cache) fail(o *policy.Org, err error) {
	if c.failed == nil {
		c.failed = map[string]error{}
	}
	c.failed[o.URL] = err
}

func (c *Cache) loadFrom(o *policy.Org, kept bool) (*state, error) {
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("org: %w", err)
	}
	dir := Dir(c.GitDir, o)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("org: %w", err)
	}
	repo, err := gitrepo.InitBare(dir, cacheEnv(c.Env))
	if err != nil {
		return nil, fmt.Errorf("org: cache of %s: %w", o.URL, err)
	}
	var st *state
	if kept {
		// The kept state was verified when it was kept; nothing kept yet
		// fetches as without Kept.
		if st, err = c.index(repo, o); err != nil {
			return c.loadFrom(o, false)
		}
		st.kept = true
	} else {
		if !c.Offline {
			if err := c.fetch(repo, o); err != nil {
				return nil, err
			}
		}
		if st, err = c.verify(repo, o); err != nil {
			return nil, err
		}
	}
	if c.orgs == nil {
		c.orgs = map[string]*state{}
	}
	c.orgs[o.URL] = st
	return st, nil
}

// fetch brings o's repository into the cache's incoming namespace, then
// keeps it only if its log extends the one kept before and it verifies.
func (c *Cache) fetch(repo *gitrepo.Repo, o *policy.Org) error {
	args := append(gitrepo.NoRewrite(o.URL), "-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never",
		"fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance", "--", o.URL)
	for _, ns := range fetched {
		args = append(args, "+"+ns+"*:"+incoming+strings.TrimPrefix(ns, "refs/")+"*")
	}
	if _, err := repo.Run(context.Background(), nil, args...); err != nil {
		return fmt.Errorf("org: fetch the organisation policy from %s: %w", o.URL, err)
	}
	got, err := incomingRefs(repo)
	if err != nil {
		return err
	}
	newTip := got[rsl.Ref]
	if newTip.IsZero() {
		return fmt.Errorf("org: %s has no git-secure log (refs/secure/rsl): it is not an organisation policy repository", o.URL)
	}
	oldTip, _, err := repo.ResolveRef(rsl.Ref)
	if err != nil {
		return fmt.Errorf("org: %w", err)
	}
	if !oldTip.IsZero() {
		ok, err := repo.IsAncestor(oldTip, newTip)
		if err != nil {
			return fmt.Errorf("org: %w", err)
		}
		if !ok {
			return fmt.Errorf("%w: %s serves a log (tip %s) that does not contain the one this repository verified before (tip %s): the server was put back to an older snapshot, or the log was rewritten; tell the organisation's administrators", ErrRollback, o.URL, newTip, oldTip)
		}
	}
	if _, err := verify.Verify(repo, c.options(o, got)); err != nil {
		return fmt.Errorf("org: the organisation policy at %s does not verify: %w", o.URL, err)
	}
	return keep(repo, got)
}

func (c *Cache) options(o *policy.Org, values map[string]gitrepo.Hash) verify.Options {
	return verify.Options{Now: c.Now, RefValues: values, RootKeys: o.RootKeys, RootThreshold: o.RootThreshold, SkipFreshness: c.SkipFreshness}
}

// incomingRefs maps the incoming namespace back to the organisation
// repository's ref names.
func incomingRefs(repo *gitrepo.Repo) (map[string]gitrepo.Hash, error) {
	refs, err := repo.ListRefs(incoming)
	if err != nil {
		return nil, fmt.Errorf("org: %w", err)
	}
	out := map[string]gitrepo.Hash{}
	for _, r := range refs {
		out["refs/"+strings.TrimPrefix(r.Name, incoming)] = r.Hash
	}
	return out, nil
}

// keep moves the cache's refs to the verified state, in one transaction.
func keep(repo *gitrepo.Repo, values map[string]gitrepo.Hash) error {
	var kept []gitrepo.Ref
	for _, ns := range fetched {
		refs, err := repo.ListRefs(ns)
		if err != nil {
			return fmt.Errorf("org: %w", err)
		}
		kept = append(kept, refs...)
	}
	var updates []gitrepo.RefUpdate
	for _, r := range kept {
		if _, ok := values[r.Name]; !ok {
			updates = append(updates, gitrepo.RefUpdate{Name: r.Name, Old: r.Hash, New: gitrepo.ZeroHash})
		}
	}
	old := map[string]gitrepo.Hash{}
	for _, r := range kept {
		old[r.Name] = r.Hash
	}
	for name, h := range values {
		if old[name] != h {
			updates = append(updates, gitrepo.RefUpdate{Name: name, Old: old[name], New: h})
		}
	}
	if len(updates) == 0 {
		return nil
	}
	if err := repo.UpdateRefs(updates, "git-secure: organisation policy verified"); err != nil {
		return fmt.Errorf("org: keep the verified organisation policy: %w", err)
	}
	return nil
}

// verify reads the kept state: it was verified when it was kept, and is
// verified again here (the cache is in the same trust domain as the
// checkpoint, but a verification must not rest on a file it cannot
// check), then indexes the log's policy entries.
func (c *Cache) verify(repo *gitrepo.Repo, o *policy.Org) (*state, error) {
	values := map[string]gitrepo.Hash{}
	for _, ns := range fetched {
		refs, err := repo.ListRefs(ns)
		if err != nil {
			return nil, fmt.Errorf("org: %w", err)
		}
		for _, r := range refs {
			values[r.Name] = r.Hash
		}
	}
	tip := values[rsl.Ref]
	if tip.IsZero() {
		return nil, fmt.Errorf("org: no organisation policy of %s has been fetched yet: fetch with the network (without --offline)", o.URL)
	}
	if c.Offline {
		if _, err := verify.Verify(repo, c.options(o, values)); err != nil {
			return nil, fmt.Errorf("org: the organisation policy kept from %s does not verify: %w", o.URL, err)
		}
	}
	return indexLog(repo, o, tip)
}

// index reads the kept state as it was verified when kept.
func (c *Cache) index(repo *gitrepo.Repo, o *policy.Org) (*state, error) {
	tip, _, err := repo.ResolveRef(rsl.Ref)
	if err != nil {
		return nil, fmt.Errorf("org: %w", err)
	}
	if tip.IsZero() {
		return nil, fmt.Errorf("org: no organisation policy of %s has been kept yet", o.URL)
	}
	return indexLog(repo, o, tip)
}

// indexLog indexes the policy entries of the organisation's log at tip.
func indexLog(repo *gitrepo.Repo, o *policy.Org, tip gitrepo.Hash) (*state, error) {
	st := &state{repo: repo, tip: tip, versions: map[uint64]version{}}
	err := rsl.WalkBack(repo, tip, func(r *rsl.Record) (bool, error) {
		if r.Entry.IsPolicy() {
			st.versions[r.Entry.Number] = version{id: r.ID, commit: r.Entry.New}
			if st.latest.Number == 0 {
				st.latest = rsl.OrgVersion{Number: r.Entry.Number, ID: r.ID}
			}
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("org: read the organisation log of %s: %w", o.URL, err)
	}
	return st, nil
}

// keptGitVars are the GIT_ variables the cache's git processes inherit:
// how to reach a server and which configuration to read. Every other one
// is dropped: in a server's pre-receive hook GIT_OBJECT_DIRECTORY and
// GIT_QUARANTINE_PATH point at the push's quarantine, where the
// organisation's objects must not go.
var keptGitVars = []string{"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT",
	"GIT_TERMINAL_PROMPT", "GIT_ASKPASS", "GIT_SECURE_NO_FASTPATH", "GIT_SECURE_NO_INPROCESS"}

func cacheEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GIT_") || slices.Contains(keptGitVars, k) {
			out = append(out, kv)
		}
	}
	return out
}
