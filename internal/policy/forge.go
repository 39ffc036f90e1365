package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/sign"
)

// Forge bridges: reviews on a hosted forge (GitHub, GitLab) count as
// approvals when a bridge the root trusts records them. Two fields hold it:
//
//   - root.json fieldForgeApps: app name -> the bridge's SSH public key
//     (one authorized_keys line without comment). A root change, as a
//     root key is: whoever holds the key can say who reviewed what, so
//     only the root thresholds may add, replace or remove it. The key is
//     of its own (no root, rules, freshness or person key), so it signs no
//     entry, rule or root, and trust revoke-key revokes it like any key.
//   - targets.json fieldForgeAccounts: person -> forge -> account. The
//     rules keys decide which account is which person; the bridge only
//     reports which account reviewed, and counts for that person alone.
const (
	fieldForgeApps     = "x-git-secure-forge-apps"
	fieldForgeAccounts = "x-git-secure-forge-accounts"
)

// ForgeApp is a forge bridge the root trusts.
type ForgeApp struct {
	Name        string
	Public      ssh.PublicKey
	Fingerprint string
}

// forgeIndex is the decoded forge fields of a policy.
type forgeIndex struct {
	apps     []*ForgeApp
	accounts map[string]map[string]string // person -> forge -> account
	byLogin  map[string]string            // forge NUL lower(account) -> person
}

// ForgeApps returns the trusted forge bridges, sorted by name.
func (p *Policy) ForgeApps() []*ForgeApp {
	if p.forge == nil {
		return nil
	}
	return p.forge.apps
}

// LookupForgeAppKey returns a forge bridge's key by SSH fingerprint (the
// shape sign.VerifySSHSig and Envelope.Verify take). No other lookup knows
// bridge keys, and this one knows no other key.
func (p *Policy) LookupForgeAppKey(fp string) (ssh.PublicKey, bool) {
	for _, a := range p.ForgeApps() {
		if a.Fingerprint == fp {
			return a.Public, true
		}
	}
	return nil, false
}

// ForgeAppByFingerprint returns the bridge with key fingerprint fp.
func (p *Policy) ForgeAppByFingerprint(fp string) (*ForgeApp, bool) {
	for _, a := range p.ForgeApps() {
		if a.Fingerprint == fp {
			return a, true
		}
	}
	return nil, false
}

// ForgeAccount returns person's account on forge ("" when none).
func (p *Policy) ForgeAccount(person, forge string) string {
	if p.forge == nil {
		return ""
	}
	return p.forge.accounts[person][forge]
}

// PersonByForgeAccount returns the person whose account on forge is login.
// Forge logins are case-insensitive (GitHub's, GitLab's), so is this.
func (p *Policy) PersonByForgeAccount(forge, login string) (*Person, bool) {
	if p.forge == nil {
		return nil, false
	}
	name, ok := p.forge.byLogin[forge+"\x00"+strings.ToLower(login)]
	if !ok {
		return nil, false
	}
	return p.Person(name)
}

func authorizedLine(pub ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
}

// decodeForge validates and indexes the forge fields; personKeys and
// rootKeys are every other key, which a bridge key must not be.
func (p *Policy) decodeForge(rs *metadata.RootType, ts *metadata.TargetsType, rootKeys, personKeys map[string]*Key) error {
	p.forge = &forgeIndex{accounts: map[string]map[string]string{}, byLogin: map[string]string{}}
	if v, ok := rs.UnrecognizedFields[fieldForgeApps]; ok {
		raw, ok := v.(map[string]any)
		if !ok || len(raw) == 0 {
			return fmt.Errorf("%w: root.json: %s must be a non-empty object of app name to SSH public key", ErrMalformed, fieldForgeApps)
		}
		others := map[string]bool{}
		for _, k := range rootKeys {
			others[k.Fingerprint] = true
		}
		for _, k := range personKeys {
			others[k.Fingerprint] = true
		}
		seen := map[string]string{}
		for name, kv := range raw {
			line, ok := kv.(string)
			if !ok || !validName(name) {
				return fmt.Errorf("%w: root.json: %s: bad entry %q", ErrMalformed, fieldForgeApps, name)
			}
			pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(line))
			if err != nil || len(rest) != 0 || authorizedLine(pub) != line {
				return fmt.Errorf("%w: root.json: forge app %s: not one canonical SSH public key line", ErrMalformed, name)
			}
			if _, _, err := sign.TUFKey(pub); err != nil {
				return fmt.Errorf("%w: root.json: forge app %s: %v", ErrMalformed, name, err)
			}
			fp := sign.Fingerprint(pub)
			if others[fp] {
				return fmt.Errorf("%w: forge app %s's key %s is also a root, rules, freshness or person key: give the bridge a key of its own", ErrMalformed, name, fp)
			}
			if other, dup := seen[fp]; dup {
				return fmt.Errorf("%w: forge apps %s and %s have the same key %s", ErrMalformed, other, name, fp)
			}
			seen[fp] = name
			p.forge.apps = append(p.forge.apps, &ForgeApp{Name: name, Public: pub, Fingerprint: fp})
		}
		sort.Slice(p.forge.apps, func(i, j int) bool { return p.forge.apps[i].Name < p.forge.apps[j].Name })
	}
	if v, ok := ts.UnrecognizedFields[fieldForgeAccounts]; ok {
		raw, ok := v.(map[string]any)
		if !ok || len(raw) == 0 {
			return fmt.Errorf("%w: targets.json: %s must be a non-empty object of person to forge accounts", ErrMalformed, fieldForgeAccounts)
		}
		for person, av := range raw {
			if _, ok := p.Person(person); !ok {
				return fmt.Errorf("%w: targets.json: %s names %q, not a person", ErrMalformed, fieldForgeAccounts, person)
			}
			accts, ok := av.(map[string]any)
			if !ok || len(accts) == 0 {
				return fmt.Errorf("%w: targets.json: %s of %s must be a non-empty object of forge to account", ErrMalformed, fieldForgeAccounts, person)
			}
			p.forge.accounts[person] = map[string]string{}
			for forge, lv := range accts {
				login, ok := lv.(string)
				if !ok {
					return fmt.Errorf("%w: targets.json: %s of %s: %s is not a string", ErrMalformed, fieldForgeAccounts, person, forge)
				}
				if err := attest.ValidForgeAccount(forge, login); err != nil {
					return fmt.Errorf("%w: targets.json: %s of %s: %v", ErrMalformed, fieldForgeAccounts, person, err)
				}
				key := forge + "\x00" + strings.ToLower(login)
				if other, dup := p.forge.byLogin[key]; dup {
					return fmt.Errorf("%w: targets.json: %s account %s belongs to both %s and %s", ErrMalformed, forge, login, other, person)
				}
				p.forge.byLogin[key] = person
				p.forge.accounts[person][forge] = login
			}
		}
	}
	return nil
}

// SetForgeAccount maps person's account on forge to login ("" removes it):
// a rules change.
func (p *Policy) SetForgeAccount(base *Policy, person, forge, login string, now time.Time) error {
	if _, ok := p.Person(person); !ok {
		return invalid("no person named %s (see git secure policy list)", person)
	}
	if login != "" {
		if err := attest.ValidForgeAccount(forge, login); err != nil {
			return invalid("%v", err)
		}
		if other, ok := p.PersonByForgeAccount(forge, login); ok && other.Name != person {
			return invalid("%s account %s already belongs to %s", forge, login, other.Name)
		}
	}
	fields := p.Targets.Signed.UnrecognizedFields
	raw, _ := fields[fieldForgeAccounts].(map[string]any)
	if raw == nil {
		raw = map[string]any{}
	}
	accts, _ := raw[person].(map[string]any)
	if accts == nil {
		accts = map[string]any{}
	}
	if login == "" {
		delete(accts, forge)
	} else {
		accts[forge] = login
	}
	if len(accts) == 0 {
		delete(raw, person)
	} else {
		raw[person] = accts
	}
	if len(raw) == 0 {
		delete(fields, fieldForgeAccounts)
	} else {
		fields[fieldForgeAccounts] = raw
	}
	p.touchTargets(base, now)
	q, err := p.Clone()
	if err != nil {
		return err
	}
	*p = *q
	return nil
}

// dropForgeAccounts removes person's forge accounts (before the person is
// removed: an account of nobody would make the policy malformed).
func (p *Policy) dropForgeAccounts(person string) {
	if raw, ok := p.Targets.Signed.UnrecognizedFields[fieldForgeAccounts].(map[string]any); ok {
		delete(raw, person)
		if len(raw) == 0 {
			delete(p.Targets.Signed.UnrecognizedFields, fieldForgeAccounts)
		}
	}
}

// AddForgeApp trusts a forge bridge: a root change.
func (p *Policy) AddForgeApp(base *Policy, name string, pub ssh.PublicKey, now time.Time) error {
	if !validName(name) {
		return invalid("forge app name %q: use letters, digits, '.', '_' or '-' (at most 64)", name)
	}
	if _, _, err := sign.TUFKey(pub); err != nil {
		return invalid("%v", err)
	}
	if slices.ContainsFunc(p.ForgeApps(), func(a *ForgeApp) bool { return a.Name == name }) {
		return invalid("forge app %s already exists (remove it first to change its key)", name)
	}
	if _, ok := p.LookupKey(sign.Fingerprint(pub)); ok {
		return invalid("key %s is already a root, rules or person key: give the bridge a key of its own", sign.Fingerprint(pub))
	}
	raw, _ := p.Root.Signed.UnrecognizedFields[fieldForgeApps].(map[string]any)
	if raw == nil {
		raw = map[string]any{}
	}
	raw[name] = authorizedLine(pub)
	p.Root.Signed.UnrecognizedFields[fieldForgeApps] = raw
	return p.reindexRoot(base, now)
}

// RemoveForgeApp stops trusting a forge bridge: a root change. Reviews it
// recorded count no more from the entry that applies the change on (to
// void what it recorded before, revoke its key: trust revoke-key).
func (p *Policy) RemoveForgeApp(base *Policy, name string, now time.Time) error {
	raw, _ := p.Root.Signed.UnrecognizedFields[fieldForgeApps].(map[string]any)
	if _, ok := raw[name]; !ok {
		return invalid("no forge app named %s (see git secure policy list)", name)
	}
	delete(raw, name)
	if len(raw) == 0 {
		delete(p.Root.Signed.UnrecognizedFields, fieldForgeApps)
	}
	return p.reindexRoot(base, now)
}
