package rslcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// EntryJSON is one entry in rsl log --json.
type EntryJSON struct {
	Number uint64   `json:"number"`
	ID     string   `json:"id"`
	Type   string   `json:"type"`
	Ref    string   `json:"ref,omitempty"`
	Old    string   `json:"old,omitempty"`
	New    string   `json:"new,omitempty"`
	Skips  []uint64 `json:"skips,omitempty"`
	Reason string   `json:"reason,omitempty"`
	// Signer is the fingerprint the signature names (verified or not).
	Signer string `json:"signerKey"`
	// Person is who the policy in force names for the verified signing
	// key: empty when the signature does not verify under that policy or
	// the key is a root or rules key of no person.
	Person string `json:"person,omitempty"`
	// SignerStatus says what was checked: "person", "policy key" (a root
	// or rules key of no person), "forge app" (a forge bridge's entry of a
	// move the forge made), "unknown key" or "bad signature".
	SignerStatus string `json:"signerStatus"`
	// KeyRole, for a policy key of no person, is the root role it holds
	// there: "root", "rules" or "root and rules".
	KeyRole string `json:"keyRole,omitempty"`
	// PersonNow, for a policy key of no person, is the person the newest
	// policy names for that key (git secure init's key, added as a person
	// later), so that the entry says whose it is.
	PersonNow string `json:"personNow,omitempty"`
	// ForgeApp names the forge app whose key signed the entry.
	ForgeApp string `json:"forgeApp,omitempty"`
	// Committer is the commit's committer field as written: anyone can
	// write anything there, it names no one. Human output does not show it.
	Committer string    `json:"committer"`
	Time      time.Time `json:"time"`
}

// Signer status values of EntryJSON.SignerStatus.
const (
	SignerPerson    = "person"
	SignerPolicyKey = "policy key"
	SignerForgeApp  = "forge app"
	SignerUnknown   = "unknown key"
	SignerBad       = "bad signature"
)

// logItem is one entry rsl log shows, with its signer once the policy in
// force at the entry is known.
type logItem struct {
	rec      *rsl.Record
	j        EntryJSON
	resolved bool
	// tries counts the policies tried: a policy entry may be signed under
	// its own policy or the one before it, any other entry only under the
	// one before it.
	tries int
}

// runLog shows the log, newest first. Each entry names the person the
// policy in force at that entry names for the key that verifiably signed
// it, never the commit's committer field, which the signer writes freely.
func runLog(_ context.Context, opts *LogOptions) error {
	f, asJSON, max := opts.F, opts.JSON, opts.MaxCount
	r, err := f.Repo()
	if err != nil {
		return err
	}
	tip, ok, err := r.Git.ResolveRef(rsl.Ref)
	if err != nil {
		return err
	}
	if !ok {
		return verify.ErrNoLog
	}
	var items, pending []*logItem
	printed := 0
	// flush prints the entries whose signer is known, newest first, as
	// soon as every newer one is printed: the first screen does not wait
	// for the rest of the log.
	flush := func() {
		for ; !asJSON && printed < len(items) && items[printed].resolved; printed++ {
			printLogEntry(f, items[printed])
			items[printed] = nil
		}
	}
	// A checkpoint (a complete verification up to its entry) knows the
	// policy in force there: entries newer than it need not wait for the
	// walk to reach the policy entry, which may be the log's first.
	cp, _ := r.Checkpoints().Load()
	var cpPol *policy.Policy
	var newest *policy.Policy // the policy in force at the log's tip, once read
	policies := map[gitrepo.Hash]*policy.Policy{}
	err = rsl.WalkBack(r.Git, tip, func(rec *rsl.Record) (bool, error) {
		full := max > 0 && len(items) >= max
		if !full {
			it := &logItem{rec: rec, j: logEntryJSON(rec)}
			items = append(items, it)
			pending = append(pending, it)
		}
		if rec.Entry.IsPolicy() {
			pol, err := loadPolicy(r.Git, policies, rec.Entry.New)
			if err != nil {
				return false, fmt.Errorf("rsl log: entry #%d: %w", rec.Entry.Number, err)
			}
			if newest == nil {
				newest = pol
			}
			pending = resolveSigners(pending, pol, newest)
		} else {
			if cp.IsEntry(rec.Entry.Number, rec.ID) {
				// The log holds the checkpoint's entry: from here down
				// to its policy entry, its policy is the one in force.
				cpPol, _ = loadPolicy(r.Git, policies, cp.PolicyCommit)
			}
			if cpPol != nil && rec.Entry.Number > cp.PolicyEntry && len(pending) > 0 {
				// No policy entry between this one and the pending ones:
				// the policy in force here is what they wait for.
				if newest == nil {
					newest = cpPol
				}
				pending = resolveSigners(pending, cpPol, newest)
			}
		}
		flush()
		return !full || len(pending) > 0, nil
	})
	if err != nil {
		return err
	}
	for _, it := range pending { // no policy at or before them: nothing vouches for the key
		if !it.resolved {
			it.j.SignerStatus = SignerUnknown
			it.resolved = true
		}
	}
	if asJSON {
		entries := make([]EntryJSON, 0, len(items))
		for _, it := range items {
			entries = append(entries, it.j)
		}
		return f.PrintJSON(entries)
	}
	flush()
	return nil
}

func logEntryJSON(rec *rsl.Record) EntryJSON {
	e := rec.Entry
	fp, _ := sign.SignatureFingerprint(rec.Commit.Signature)
	j := EntryJSON{Number: e.Number, ID: rec.ID.String(), Type: string(e.Type), Ref: e.Ref, Reason: e.Reason, Signer: fp,
		Committer: rec.Commit.Committer.Name + " <" + rec.Commit.Committer.Email + ">", Time: rec.Commit.Committer.When}
	if e.Type == rsl.TypeRef {
		j.Old, j.New = e.Old.String(), e.New.String()
	}
	for _, s := range e.Skips {
		j.Skips = append(j.Skips, s.Number)
	}
	return j
}

func loadPolicy(g *gitrepo.Repo, cache map[gitrepo.Hash]*policy.Policy, h gitrepo.Hash) (*policy.Policy, error) {
	if p, ok := cache[h]; ok {
		return p, nil
	}
	p, err := policy.LoadSigned(g, h, nil)
	if err != nil {
		return nil, err
	}
	cache[h] = p
	return p, nil
}

// resolveSigners verifies the signature of every pending entry under pol,
// the policy recorded by the newest policy entry at or before them, and
// returns the entries still pending (a policy entry whose key pol does not
// know gets one more try, under the policy before it).
func resolveSigners(pending []*logItem, pol, newest *policy.Policy) []*logItem {
	var rest []*logItem
	for _, it := range pending {
		it.tries++
		lookup := pol.LookupKey
		if e := it.rec.Entry; e.Type == rsl.TypeRef && !e.IsPolicy() {
			// A forge app signs the entries of moves the forge made
			// (git secure forge record-merge), and nothing else.
			lookup = func(fp string) (ssh.PublicKey, bool) {
				if k, ok := pol.LookupKey(fp); ok {
					return k, ok
				}
				return pol.LookupForgeAppKey(fp)
			}
		}
		key, err := sign.VerifySSHSig(it.rec.Commit.Signature, it.rec.Commit.SignedPayload(), sign.NamespaceGit, lookup)
		switch {
		case err == nil && forgeApp(pol, key) != "":
			it.j.Signer, it.j.SignerStatus, it.j.ForgeApp = sign.Fingerprint(key), SignerForgeApp, forgeApp(pol, key)
			it.resolved = true
		case err == nil:
			fp := sign.Fingerprint(key)
			it.j.Signer, it.j.SignerStatus = fp, SignerPolicyKey
			if p, ok := pol.PersonByFingerprint(fp); ok {
				it.j.Person, it.j.SignerStatus = p.Name, SignerPerson
			} else {
				it.j.KeyRole = keyRole(pol, fp)
				if p, ok := newest.PersonByFingerprint(fp); ok {
					it.j.PersonNow = p.Name
				}
			}
			it.resolved = true
		case errors.Is(err, sign.ErrUnknownKey):
			it.j.SignerStatus = SignerUnknown
			it.resolved = !it.rec.Entry.IsPolicy() || it.tries >= 2
		default:
			it.j.SignerStatus = SignerBad
			it.resolved = true
		}
		if !it.resolved {
			rest = append(rest, it)
		}
	}
	return rest
}

func printLogEntry(f *factory.Factory, it *logItem) {
	e, j := it.rec.Entry, it.j
	title := e.Title()
	f.Out("#%-5d %s %s  %s\n", e.Number, it.rec.ID.String()[:12], j.Time.UTC().Format("2006-01-02 15:04"), title[strings.Index(title, ": ")+2:])
	by := signedBy(j)
	if e.Type == rsl.TypeRef {
		f.Out("       %s -> %s  %s\n", cmdutil.ShortHash(e.Old), cmdutil.ShortHash(e.New), by)
	} else {
		f.Out("       reason: %s  %s\n", e.Reason, by)
	}
}

// signedBy describes an entry's signer for people: the policy's person for
// the verified key, or why there is none.
func signedBy(j EntryJSON) string {
	key := j.Signer
	if key == "" {
		key = "no key"
	}
	switch j.SignerStatus {
	case SignerPerson:
		return fmt.Sprintf("by %s (%s)", j.Person, key)
	case SignerPolicyKey:
		role := j.KeyRole
		if role == "" {
			role = "root or rules"
		}
		if j.PersonNow != "" {
			return fmt.Sprintf("by the %s key (%s), %s's key in the policy now", role, key, j.PersonNow)
		}
		return fmt.Sprintf("by the %s key (%s), no person's", role, key)
	case SignerForgeApp:
		return fmt.Sprintf("by forge app %s, for the forge's merge (%s)", j.ForgeApp, key)
	case SignerBad:
		return fmt.Sprintf("signature does NOT verify (%s)", key)
	default:
		return fmt.Sprintf("signed by %s, a key the policy in force does not know", key)
	}
}

// forgeApp returns the name of the forge app whose key is key ("" none).
func forgeApp(pol *policy.Policy, key ssh.PublicKey) string {
	if app, ok := pol.ForgeAppByFingerprint(sign.Fingerprint(key)); ok {
		return app.Name
	}
	return ""
}

// keyRole names the root roles of pol whose keys include fp.
func keyRole(pol *policy.Policy, fp string) string {
	holds := func(role string) bool {
		keys, _ := pol.RoleKeys(role)
		for _, k := range keys {
			if k.Fingerprint == fp {
				return true
			}
		}
		return false
	}
	switch root, rules := holds("root"), holds("targets"); {
	case root && rules:
		return "root and rules"
	case root:
		return "root"
	case rules:
		return "rules"
	}
	return ""
}
