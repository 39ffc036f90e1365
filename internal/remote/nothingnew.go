package remote

import (
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

// nothingNew reports whether a fetch can answer from what this clone
// already verified: the remote lists exactly the refs remembered at the
// last verified contact (forge namespaces aside: they are never fetched
// nor judged), this clone's refs/secure/* are the ones listed (adopted,
// nothing unpushed), every listed object is here, no secure.* setting
// changed since (a root key pin or secure.requireFreshness set since may
// change the verdict), and the policy it was verified under has not
// expired since. A policy with freshness keys is never remembered (the
// statement's age must be judged at every fetch): the verified fetch
// wrote that down, so no policy is read here. Then the private fetch,
// verification and adoption would change nothing, and a fetch with
// nothing new costs one listing, as with plain git. remote is
// the remote's state as a verified fetch would give it: the remembered
// refs, with the forge namespaces at their listed values.
func (h *Helper) nothingNew(listing map[string]gitrepo.Hash, head string) (remote map[string]gitrepo.Hash, ok bool) {
	// Only a state this clone verified counts: the listing remembered
	// after a push holds values nobody verified.
	key, ok := h.verifiedKey()
	if !ok {
		return nil, false
	}
	st, ok := h.loadStateFrom(h.verifiedStatePath(), key)
	if !ok || st.Head != head || st.Refs[rsl.Ref].IsZero() || st.Until.IsZero() || h.Repo.Now().After(st.Until) {
		return nil, false
	}
	// ls-remote lists HEAD's value as a ref; HEAD is compared by name.
	listed := make(map[string]gitrepo.Hash, len(listing))
	for name, hash := range listing {
		if name != "HEAD" {
			listed[name] = hash
		}
	}
	if !sameNonForge(st.Refs, listed) {
		return nil, false
	}
	local, err := h.Repo.RefValues("refs/secure/")
	if err != nil {
		return nil, false
	}
	var objects []gitrepo.Hash
	for name, hash := range listed {
		switch {
		case isForgeRef(name):
		case strings.HasPrefix(name, "refs/secure/"):
			if local[name] != hash {
				return nil, false
			}
		default:
			objects = append(objects, hash)
		}
	}
	if len(objects) > 0 {
		types, err := h.Repo.Git.ObjectTypes(objects)
		if err != nil || len(types) != len(objects) {
			return nil, false
		}
		for _, t := range types {
			if t == "" {
				return nil, false
			}
		}
	}
	remote = map[string]gitrepo.Hash{}
	for name, hash := range st.Refs {
		if !isForgeRef(name) && name != "HEAD" {
			remote[name] = hash
		}
	}
	h.verifiedUntil = st.Until
	return addUnfetched(remote, listed), true
}

// sameNonForge reports whether a and b hold the same refs at the same
// values, refs of the forge namespaces and HEAD aside.
func sameNonForge(a, b map[string]gitrepo.Hash) bool {
	n := 0
	for name, hash := range a {
		if isForgeRef(name) || name == "HEAD" {
			continue
		}
		if b[name] != hash {
			return false
		}
		n++
	}
	for name := range b {
		if !isForgeRef(name) && name != "HEAD" {
			n--
		}
	}
	return n == 0
}
