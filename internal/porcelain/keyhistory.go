package porcelain

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// maxKeyHistory bounds the policy versions KeyRemoval reads back: it
// runs on a refusal only, and a rotation is recent history.
const maxKeyHistory = 64

// KeyRemoval says, for key fp that the policy in force (pol) does not
// list, which person it belonged to, in which policy version it was
// removed and which keys that person has now, from the log's policy
// entries read newest first from tip; "" when no recent policy listed it.
// A person told only "your key is not in the policy" after a rotation
// could not tell a removed key from a mistyped one.
func (r *Repo) KeyRemoval(tip gitrepo.Hash, pol *policy.Policy, fp string) string {
	type version struct {
		entry uint64
		pol   *policy.Policy
	}
	var newer *version // the policy version after the one being read
	read := 0
	msg := ""
	_ = rsl.WalkBack(r.Git, tip, func(rec *rsl.Record) (bool, error) {
		if !rec.Entry.IsPolicy() || rec.Entry.New.IsZero() {
			return true, nil
		}
		if read++; read > maxKeyHistory {
			return false, nil
		}
		p, err := r.PolicyAt(rec.Entry.New)
		if err != nil {
			return false, nil // advice only: the refusal stands
		}
		if person, ok := p.PersonByFingerprint(fp); ok && newer != nil {
			msg = removalText(person.Name, fp, newer.entry, newer.pol, pol)
			return false, nil
		}
		newer = &version{entry: rec.Entry.Number, pol: p}
		return true, nil
	})
	return msg
}

func removalText(name, fp string, entry uint64, removed, now *policy.Policy) string {
	when := fmt.Sprintf("policy rules v%d (entry #%d)", removed.Targets.Signed.Version, entry)
	person, ok := now.Person(name)
	if !ok || len(person.Keys) == 0 {
		return fmt.Sprintf("your key %s was person %s's; %s removed %s from the policy", fp, name, when, name)
	}
	keys := make([]string, len(person.Keys))
	for i, k := range person.Keys {
		keys[i] = k.Fingerprint
	}
	return fmt.Sprintf("your key %s was removed from person %s in %s; %s's key(s) now: %s: sign with one of them (git config user.signingkey PATH.pub of that key)", fp, name, when, name, strings.Join(keys, ", "))
}
