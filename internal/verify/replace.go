package verify

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// ErrReadRewritten: something in the repository makes git read objects or
// history other than they are (a replace ref, a graft file, a shallow
// file). Verification reads the objects themselves, so it would approve
// content that git shows, archives and serves differently. It is a kind of
// failure like those in errors.go.
var ErrReadRewritten = errors.New("git reads rewritten objects")

// RewritesReads reports whether ref is in a namespace that changes how git
// reads objects (refs/replace/*): such a ref is never an unprotected ref
// that a server may accept without verifying it.
func RewritesReads(ref string) bool { return strings.HasPrefix(ref, policy.ReplaceRefPrefix) }

// checkReadRewrites fails while the judged state holds a replace ref that
// no rule names explicitly (policy.Rule.NamesExplicitly), or the
// repository has a graft or shallow file. A replace ref a rule names is an
// ordinary protected ref: its entries are checked like any other's. It is
// checked whatever refs were asked for: a replaced object changes every
// ref that reaches it.
func (v *verifier) checkReadRewrites() error {
	refs, err := v.replaceRefs()
	if err != nil {
		return err
	}
	for _, r := range refs {
		if len(v.finalPolicy.RulesNaming(r.Name, policy.ReplaceRefPrefix)) > 0 {
			continue
		}
		what := fmt.Sprintf("replaces objects with %s", short(r.Hash)) // git ignores a name that is no object id, for now
		if id, err := gitrepo.ParseHash(strings.TrimPrefix(r.Name, policy.ReplaceRefPrefix)); err == nil {
			what = fmt.Sprintf("git reads %s as %s", id, short(r.Hash))
		}
		v.fail(nil, r.Name, "", ErrReadRewritten,
			fmt.Sprintf("delete it: git update-ref -d %s (on a server: git push REMOTE :%s); if the project wants it, add a rule whose ref pattern begins with %s (git secure policy add-rule NAME --ref '%s*' --allow PERSON) and record it",
				r.Name, r.Name, policy.ReplaceRefPrefix, policy.ReplaceRefPrefix),
			"%s (git replace): git show, git archive and clones serve the replacement, which verification never reads; no rule names %s explicitly",
			what, policy.ReplaceRefPrefix)
	}
	files, err := v.repo.HistoryFiles()
	if err != nil {
		return err
	}
	bare := v.repo.WorkTree() == ""
	for _, f := range files {
		switch {
		case f.Env == "GIT_SHALLOW_FILE" && bare:
			v.fail(nil, "", "", ErrReadRewritten,
				"turn receive.shallowUpdate off (git config --unset receive.shallowUpdate); the pusher can push from a full clone (git fetch --unshallow)",
				"this push comes from a shallow clone and receive.shallowUpdate is on: git reads history cut at the commits in %s (GIT_SHALLOW_FILE) and would make this repository shallow", f.Path)
		case f.Kind == "grafts":
			v.fail(nil, "", "", ErrReadRewritten,
				fmt.Sprintf("remove %s (git replace --convert-graft-file turns it into replace refs, which then need a rule that names them)", f.Path),
				"%s gives commits other parents than they have: git log, merge-base and what this repository serves follow it, verification does not", f.Path)
		case bare:
			v.fail(nil, "", "", ErrReadRewritten,
				fmt.Sprintf("fetch the missing history into this repository (git fetch --unshallow URL) so that git removes %s, and keep receive.shallowUpdate off", f.Path),
				"this repository is shallow (%s): history stops at the commits it lists, so what it serves and what verification can check are cut short", f.Path)
		default:
			v.shallowClone(f)
		}
	}
	return nil
}

// replaceRefs returns the replace refs of the state being judged: the
// given ref values (a push's proposed state, a remote's refs), else the
// repository's own, which are what its git commands read. A clone's own
// replace refs are not mixed into a remote's state: a push through the
// helper verifies the remote under its current policy before the one that
// allows them arrives there.
func (v *verifier) replaceRefs() ([]gitrepo.Ref, error) {
	var out []gitrepo.Ref
	if v.opts.RefValues != nil {
		for name, h := range v.opts.RefValues {
			if RewritesReads(name) && !h.IsZero() {
				out = append(out, gitrepo.Ref{Name: name, Hash: h})
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out, nil
	}
	refs, err := v.repo.ListRefs(policy.ReplaceRefPrefix)
	if err != nil {
		return nil, fmt.Errorf("verify: list replace refs: %w", err)
	}
	if v.opts.Clone == nil {
		return refs, nil
	}
	// A clone judges what its remote serves: the remote's replace refs,
	// which a refspec such as +refs/*:refs/remote-refs/origin/*
	// (the CI script's) keeps as remote-tracking refs, change what every
	// mirror of the remote reads, though this clone's git does not read
	// them. Each is judged as the remote's ref (same name, its value).
	seen := make(map[string]bool, len(refs))
	for _, r := range refs {
		seen[r.Name+" "+r.Hash.String()] = true
	}
	for _, tr := range v.opts.Clone.Tracked {
		if !RewritesReads(tr.Ref) || tr.Hash.IsZero() || seen[tr.Ref+" "+tr.Hash.String()] {
			continue
		}
		seen[tr.Ref+" "+tr.Hash.String()] = true
		refs = append(refs, gitrepo.Ref{Name: tr.Ref, Hash: tr.Hash})
	}
	sort.SliceStable(refs, func(i, j int) bool { return refs[i].Name < refs[j].Name })
	return refs, nil
}
