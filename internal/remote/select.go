package remote

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// What a fetch through the helper brings in (issue 15, item 6).
//
// The helper used to mirror the whole remote (+refs/*) into its private
// namespace before answering "list". A forge's mirror carries hundreds of
// refs/pull/* (refs/merge-requests/*, ...) refs that nobody asked for, and
// a server may advertise one whose objects it cannot serve: git upload-pack
// then dies ("not our ref", exit 128) and the whole fetch failed where
// plain git, which fetches refs/heads/* only, worked.
//
// So the private fetch leaves the forges' namespaces out (it asks for the
// other listed refs by object id, fetchListed; negative refspecs when it
// falls back to fetching by name).
// Everything verification judges by name is still fetched before the
// listing is answered: branches, tags, refs/secure/*, and every other ref
// the log may record; a forge's ref is judged only when a rule names its
// namespace explicitly, and then verification needs its objects and fails
// closed without them. The forge refs git does ask for (a refspec such as
// +refs/pull/*/head:refs/remotes/origin/pr/* or git fetch origin
// refs/pull/7/head) are fetched by name when git sends "fetch" for them,
// and must arrive at the value the verified listing gave.
//
// A repository that does not use git-secure (no refs/secure/* here,
// nothing remembered or pinned; a clone of a remote without a log) is
// served as plain git
// would be: nothing is fetched at "list", and only the refs git asks for
// are fetched, by name (passThrough).

// forgeExcludes returns the negative refspecs that keep the forges'
// namespaces out of the private fetch.
func forgeExcludes() []string { return policy.ForgeExcludes(nil) }

// isForgeRef reports whether the private fetch leaves ref out.
func isForgeRef(ref string) bool {
	_, ok := policy.ForgePrefix(ref)
	return ok
}

// addUnfetched returns the refs of listing that the private fetch left out
// (the forges' namespaces) at their listed values, added to fetched: the
// state verification judges and git is told.
func addUnfetched(fetched, listing map[string]gitrepo.Hash) map[string]gitrepo.Hash {
	for name, hash := range listing {
		if _, ok := fetched[name]; !ok && isForgeRef(name) {
			fetched[name] = hash
		}
	}
	return fetched
}

// usesSecure reports whether this repository uses git-secure for this
// remote: it has a log, or remembers the remote's, or its own config
// routes the remote or installed git-secure, or it pins a root of trust. A repository with none of these is plain git's, unless it has no
// refs at all yet (a clone) and the remote has a log: the clone sets it
// up. remote is the remote's listing, read only when needed.
func (h *Helper) usesSecure(remote func() (map[string]gitrepo.Hash, error)) (bool, error) {
	g := h.Repo.Git
	refs, err := g.ListRefs("refs/")
	if err != nil {
		return false, err
	}
	for _, r := range refs {
		if strings.HasPrefix(r.Name, "refs/secure/") {
			return true, nil
		}
	}
	if tip, _, _ := g.Config(h.configKey("securetip")); tip != "" {
		return true, nil
	}
	// Routed or installed by this repository itself (git secure hooks
	// install here), not only by a user-wide install: it opted in.
	for _, key := range []string{h.configKey("vcs"), "secure.hooksInstalled"} {
		if v, ok, err := g.LocalConfig(key); err != nil {
			return false, err
		} else if ok && v != "" {
			return true, nil
		}
	}
	pin, _, err := h.Repo.PinnedRoot()
	if err != nil || len(pin) > 0 {
		return len(pin) > 0, err
	}
	if len(refs) > 0 {
		return false, nil
	}
	listing, err := remote()
	if err != nil {
		return false, err
	}
	return !listing[rsl.Ref].IsZero(), nil
}

// passThrough answers "list" for a repository that does not use
// git-secure: the remote's refs as ls-remote gives them, nothing fetched
// and nothing written, as plain git would. When the remote carries
// git-secure's metadata, it says once (remote.<name>.secureNoted) how to
// start verifying it.
func (h *Helper) passThrough(refs map[string]gitrepo.Hash, head string) {
	h.plain = true
	h.listed, h.listedHead = refs, head
	if !refs[rsl.Ref].IsZero() && h.Remote != "" && h.Remote != h.URL {
		if noted, _, _ := h.Repo.Git.Config(h.configKey("securenoted")); noted == "" {
			h.logf("note: remote %q carries git-secure metadata (refs/secure/*), which this repository does not use, so nothing fetched from it is verified; to verify from now on: git fetch %s 'refs/secure/*:refs/secure/*' && git secure verify", h.Remote, h.Remote)
			_ = h.Repo.Git.SetConfig(h.configKey("securenoted"), "true")
		}
	}
	writeList(h.Out, refs, head)
}

// fetchByName fetches the named refs and checks that each arrived at the
// value git asked for (the value the listing gave, verified or, in a
// plain repository, listed). It asks for the object ids themselves and
// writes no ref (as fetchListed: no loose ref per wanted ref to write and
// delete, which cost seconds per 10 000 refs), so what arrives is the
// value asked for or nothing; when that fails (a protocol v0 server whose
// ref moved since the listing), the refs are fetched by name into the
// private namespace and compared there.
func (h *Helper) fetchByName(wants map[string]gitrepo.Hash) error {
	if len(wants) == 0 {
		return nil
	}
	args := h.urlArgs("fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--no-recurse-submodules", "--no-auto-maintenance", "--stdin")
	if h.plain && h.opts.depth != "" {
		args = append(args, "--depth="+h.opts.depth) // as plain git would
	}
	h.sayFilterIgnored()
	args = append(args, "--", h.URL)
	var ids strings.Builder
	for _, want := range wants {
		ids.WriteString(want.String() + "\n")
	}
	if _, err := h.Repo.Git.Run(bgctx(), []byte(ids.String()), args...); err == nil {
		for name, want := range wants {
			if ok, err := h.Repo.Git.HasObject(want); err != nil {
				return err
			} else if !ok {
				return fmt.Errorf("remote helper: %s (%s) did not arrive; fetch again", name, shortStr(want.String()))
			}
		}
		return nil
	}
	var specs strings.Builder
	for name := range wants {
		fmt.Fprintf(&specs, "+%s:%s/%s\n", name, h.namespace, strings.TrimPrefix(name, "refs/"))
	}
	h.fetched = true
	if _, err := h.Repo.Git.Run(bgctx(), []byte(specs.String()), args...); err != nil {
		return fmt.Errorf("fetch from %s: %w", h.URL, err)
	}
	have, err := h.Repo.NamespaceRefs(h.namespace)
	if err != nil {
		return err
	}
	for name, want := range wants {
		if have[name] != want {
			return fmt.Errorf("remote helper: %s moved on the remote during the fetch (listed at %s, now %s); fetch again", name, shortStr(want.String()), shortStr(have[name].String()))
		}
	}
	return nil
}

// fetchMissing fetches, by name, what git asks for in one batch of
// "fetch <sha> <name>" lines and does not have yet: in a plain repository
// everything, else only the forge refs the private fetch left out. Any
// other missing object did not arrive with the verified fetch.
func (h *Helper) fetchMissing(in *bufio.Reader, first string) error {
	wants := map[string]gitrepo.Hash{}
	line := first
	for line != "" {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "fetch" {
			return fmt.Errorf("remote helper: bad fetch command %q", line)
		}
		want, err := gitrepo.ParseHash(f[1])
		name := f[2]
		if name == "HEAD" && h.listedHead != "" {
			name = h.listedHead // the branch HEAD was listed as
		}
		if err != nil || gitrepo.ValidRefName(name) != nil {
			return fmt.Errorf("remote helper: bad fetch command %q", line)
		}
		if h.listed[name] != want {
			return fmt.Errorf("remote helper: git asked for %s at %s, which the listing did not give", f[2], want)
		}
		ok, err := h.Repo.Git.HasObject(want)
		if err != nil {
			return err
		}
		switch {
		case ok:
		case h.plain || isForgeRef(name):
			wants[name] = want
		default:
			return fmt.Errorf("remote helper: %s (%s) did not arrive; the remote changed during the fetch, fetch again", f[2], want)
		}
		if line, err = readLine(in); err != nil {
			return err
		}
	}
	if err := h.fetchByName(wants); err != nil {
		return err
	}
	fmt.Fprint(h.Out, "\n")
	return nil
}

// optionDepth takes git fetch --depth N (git clone --depth N). A plain
// repository's fetch passes it on; a verified fetch takes whole history,
// which verification needs, and says so (fetchAndVerify).
func (h *Helper) optionDepth(value string) string {
	for _, c := range value {
		if c < '0' || c > '9' {
			return "error invalid depth"
		}
	}
	if value == "" || len(value) > 10 {
		return "error invalid depth"
	}
	h.opts.depth = value
	return "ok"
}

// optionFilter takes git fetch --filter SPEC (git clone --filter, a
// partial clone). Fetches through the helper bring every object and say
// so once (sayFilterIgnored): a verified fetch needs them, and handing
// the filter to the inner fetch of a URL makes git write promisor
// settings under the URL's name into the user's configuration without
// making the clone partial. The spec is still checked, as git would.
func (h *Helper) optionFilter(value string) string {
	if value == "" || len(value) > 256 || strings.HasPrefix(value, "-") {
		return "error invalid filter"
	}
	for _, c := range value {
		if c <= ' ' || c >= 0x7f {
			return "error invalid filter"
		}
	}
	h.filter = value
	return "ok"
}

// sayFilterIgnored tells that a fetch ignored --filter: once per process,
// and once per remote when the remote has a name (a partial clone's every
// fetch asks for its filter: remote.<name>.secureFilterNoted).
func (h *Helper) sayFilterIgnored() {
	if h.filter == "" || h.saidFilter {
		return
	}
	h.saidFilter = true
	if h.Remote != "" && h.Remote != h.URL {
		if noted, _, _ := h.Repo.Git.Config(h.configKey("securefilternoted")); noted != "" {
			return
		}
		_ = h.Repo.Git.SetConfig(h.configKey("securefilternoted"), "true")
	}
	h.logf("note: --filter=%s ignored: fetches through git-remote-secure bring every object (a partial clone made with plain git, then git secure hooks install, is verified by git secure verify, which fetches what it needs)", h.filter)
}

// sayDepthIgnored tells, once, that a verified fetch ignored --depth.
func (h *Helper) sayDepthIgnored() {
	if h.opts.depth == "" || h.saidDepth {
		return
	}
	h.saidDepth = true
	h.logf("note: --depth %s ignored: git-secure fetches the whole history of what it verifies (a shallow clone made without it can be verified with git secure verify --allow-shallow)", h.opts.depth)
}

// allowShallow is secure.allowShallow: a shallow clone's fetches verify
// with verify.Options.AllowShallow (the checks it cannot make are named,
// not made), as git secure verify --allow-shallow does.
func (h *Helper) allowShallow() bool {
	v, _, _ := h.Repo.ConfigValue("secure.allowShallow")
	return v == "true"
}

// sayShallow prints the warnings of a verification that accepted a
// shallow clone: each check it did not make; and, always, junk met in the
// remote's approvals store (it counts for nothing, but someone planted it).
func (h *Helper) sayShallow(res *verify.Result) {
	if res == nil {
		return
	}
	shallow := h.allowShallow()
	for _, w := range res.Warnings {
		if (shallow && strings.Contains(w, "shallow")) || strings.HasPrefix(w, verify.StoreJunkWarning) {
			h.logf("warning: %s", w)
		}
	}
}
