package policy

import (
	"errors"
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
//   - root.json fieldForgeApps: app name -> the bridge: an object
//     {"forge", "key", "repository"} binding its SSH public key (one
//     authorized_keys line without comment) to one repository of one
//     forge, or, as a git-secure before repository binding wrote it, the
//     key line alone (an app bound to no repository). A root change, as a
//     root key is: whoever holds the key can say who reviewed what, so
//     only the root thresholds may add, replace or remove it. The key is
//     of its own (no root, rules, freshness or person key), so it signs no
//     entry, rule or root, and trust revoke-key revokes it like any key.
//   - targets.json fieldForgeAccounts: person -> forge -> account: an
//     object {"id", "login"} (the numeric account id the forge gives the
//     account for good, and its login), or the login alone (older). The
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
	// Forge and Repository are the one repository the app records reviews
	// of; both "" for an app added before repository binding, whose
	// records name no repository that counts (docs/format.md).
	Forge, Repository string
}

// Binding says which repository the app is bound to, for messages.
func (a *ForgeApp) Binding() string {
	if a.Repository == "" {
		return "no repository"
	}
	return a.Forge + " " + a.Repository
}

// ForgeAccount is a person's account on a forge: its login, and the
// numeric id the forge gives the account for good ("" when the policy
// predates ids: the login alone then identifies it).
type ForgeAccount struct {
	Login, ID string
}

// String is the account as messages show it.
func (a ForgeAccount) String() string {
	if a.ID == "" {
		return a.Login
	}
	return a.Login + " (id " + a.ID + ")"
}

// forgeIndex is the decoded forge fields of a policy.
type forgeIndex struct {
	apps     []*ForgeApp
	accounts map[string]map[string]ForgeAccount // person -> forge -> account
	byLogin  map[string]string                  // forge NUL lower(login) -> person
	byID     map[string]string                  // forge NUL id -> person
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
	if a, ok := p.ForgeAppByFingerprint(fp); ok {
		return a.Public, true
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

// ForgeAccount returns person's account on forge (zero when none).
func (p *Policy) ForgeAccount(person, forge string) ForgeAccount {
	if p.forge == nil {
		return ForgeAccount{}
	}
	return p.forge.accounts[person][forge]
}

// PersonByForgeAccount returns the person whose account on forge has the
// login login. Forge logins are case-insensitive (GitHub's, GitLab's), so
// is this. It says nothing of account ids: ForgePerson decides whether a
// review counts.
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

// ForgePerson returns the person a review by the account login (with the
// numeric account id id, "" when the record has none) on forge counts
// for. The login must be a person's, and when the policy gives that
// person's account an id, id must be it: a login the forge gave to
// another account (recycled after a deletion or a rename) has another id
// and never inherits the person, and a record without an id cannot show
// it is the same account. The error says why and what to do.
func (p *Policy) ForgePerson(forge, login, id string) (*Person, error) {
	person, ok := p.PersonByForgeAccount(forge, login)
	if !ok {
		if other := p.personByForgeID(forge, id); other != "" {
			acct := p.ForgeAccount(other, forge)
			return nil, fmt.Errorf("the policy maps no person to the %s login %s, but its account id %s is %s's, mapped as %s: the account was renamed; a rules key holder updates it (git secure policy set-forge-account %s --%s %s --%s-id %s)",
				forge, login, id, other, acct.Login, other, forge, login, forge, id)
		}
		return nil, fmt.Errorf("the policy maps that account to no person (git secure policy add-person NAME --key FILE --%s %s --%s-id ID)", forge, login, forge)
	}
	want := p.ForgeAccount(person.Name, forge).ID
	switch {
	case want == "" || want == id:
		return person, nil
	case id == "":
		return nil, fmt.Errorf("the record names no account id and the policy maps %s to %s only as account id %s: it was recorded by a git-secure before account ids; record the review again (git secure forge record-approvals)",
			login, person.Name, want)
	}
	return nil, fmt.Errorf("the %s login %s now belongs to account id %s, but the policy maps %s's account id %s to it: another account with the same login (recycled or renamed) never counts for %s",
		forge, login, id, person.Name, want, person.Name)
}

// personByForgeID is the person whose account on forge has id ("" none).
func (p *Policy) personByForgeID(forge, id string) string {
	if p.forge == nil || id == "" {
		return ""
	}
	return p.forge.byID[forge+"\x00"+id]
}

func authorizedLine(pub ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub)))
}

// decodeForge validates and indexes the forge fields; personKeys and
// rootKeys are every other key, which a bridge key must not be.
func (p *Policy) decodeForge(rs *metadata.RootType, ts *metadata.TargetsType, rootKeys, personKeys map[string]*Key) error {
	p.forge = &forgeIndex{accounts: map[string]map[string]ForgeAccount{}, byLogin: map[string]string{}, byID: map[string]string{}}
	if v, ok := rs.UnrecognizedFields[fieldForgeApps]; ok {
		if err := p.decodeForgeApps(v, rootKeys, personKeys); err != nil {
			return err
		}
	}
	if v, ok := ts.UnrecognizedFields[fieldForgeAccounts]; ok {
		raw, ok := v.(map[string]any)
		if !ok || len(raw) == 0 {
			return fmt.Errorf("%w: targets.json: %s must be a non-empty object of person to forge accounts", ErrMalformed, fieldForgeAccounts)
		}
		for person, av := range raw {
			if err := p.decodeForgeAccounts(person, av); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeForgeApps decodes root.json's forge apps.
func (p *Policy) decodeForgeApps(v any, rootKeys, personKeys map[string]*Key) error {
	raw, ok := v.(map[string]any)
	if !ok || len(raw) == 0 {
		return fmt.Errorf("%w: root.json: %s must be a non-empty object of app name to forge app", ErrMalformed, fieldForgeApps)
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
		if !validName(name) {
			return fmt.Errorf("%w: root.json: %s: bad app name %q", ErrMalformed, fieldForgeApps, name)
		}
		app, err := decodeForgeApp(name, kv)
		if err != nil {
			return fmt.Errorf("%w: root.json: forge app %s: %v", ErrMalformed, name, err)
		}
		if others[app.Fingerprint] {
			return fmt.Errorf("%w: forge app %s's key %s is also a root, rules, freshness or person key: give the bridge a key of its own", ErrMalformed, name, app.Fingerprint)
		}
		if other, dup := seen[app.Fingerprint]; dup {
			return fmt.Errorf("%w: forge apps %s and %s have the same key %s", ErrMalformed, other, name, app.Fingerprint)
		}
		seen[app.Fingerprint] = name
		p.forge.apps = append(p.forge.apps, app)
	}
	sort.Slice(p.forge.apps, func(i, j int) bool { return p.forge.apps[i].Name < p.forge.apps[j].Name })
	return nil
}

// decodeForgeApp decodes one app: {"forge","key","repository"}, exactly
// these keys, or the key line alone (an app bound to no repository).
func decodeForgeApp(name string, v any) (*ForgeApp, error) {
	app := &ForgeApp{Name: name}
	line, ok := v.(string)
	if !ok {
		obj, isObj := v.(map[string]any)
		if !isObj || len(obj) != 3 {
			return nil, errors.New(`not an object of "forge", "key" and "repository"`)
		}
		var fields [3]string
		for i, k := range []string{"forge", "key", "repository"} {
			if fields[i], ok = obj[k].(string); !ok {
				return nil, fmt.Errorf("%q is missing or not a string", k)
			}
		}
		app.Forge, line, app.Repository = fields[0], fields[1], fields[2]
		if err := attest.ValidForgeRepository(app.Forge, app.Repository); err != nil {
			return nil, err
		}
	}
	pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(line))
	if err != nil || len(rest) != 0 || authorizedLine(pub) != line {
		return nil, errors.New("not one canonical SSH public key line")
	}
	if _, _, err := sign.TUFKey(pub); err != nil {
		return nil, err
	}
	app.Public, app.Fingerprint = pub, sign.Fingerprint(pub)
	return app, nil
}

// decodeForgeAccounts decodes and indexes person's forge accounts: each
// {"id","login"}, exactly these keys, or the login alone (older).
func (p *Policy) decodeForgeAccounts(person string, av any) error {
	if _, ok := p.Person(person); !ok {
		return fmt.Errorf("%w: targets.json: %s names %q, not a person", ErrMalformed, fieldForgeAccounts, person)
	}
	accts, ok := av.(map[string]any)
	if !ok || len(accts) == 0 {
		return fmt.Errorf("%w: targets.json: %s of %s must be a non-empty object of forge to account", ErrMalformed, fieldForgeAccounts, person)
	}
	p.forge.accounts[person] = map[string]ForgeAccount{}
	for forge, lv := range accts {
		acct, err := decodeForgeAccount(forge, lv)
		if err != nil {
			return fmt.Errorf("%w: targets.json: %s of %s: %v", ErrMalformed, fieldForgeAccounts, person, err)
		}
		key := forge + "\x00" + strings.ToLower(acct.Login)
		if other, dup := p.forge.byLogin[key]; dup {
			return fmt.Errorf("%w: targets.json: %s account %s belongs to both %s and %s", ErrMalformed, forge, acct.Login, other, person)
		}
		p.forge.byLogin[key] = person
		if acct.ID != "" {
			idKey := forge + "\x00" + acct.ID
			if other, dup := p.forge.byID[idKey]; dup {
				return fmt.Errorf("%w: targets.json: %s account id %s belongs to both %s and %s", ErrMalformed, forge, acct.ID, other, person)
			}
			p.forge.byID[idKey] = person
		}
		p.forge.accounts[person][forge] = acct
	}
	return nil
}

// decodeForgeAccount decodes one account of forge: {"id","login"},
// exactly these keys, or the login alone (older).
func decodeForgeAccount(forge string, v any) (ForgeAccount, error) {
	var a ForgeAccount
	login, isLogin := v.(string)
	if !isLogin {
		obj, _ := v.(map[string]any) // nil (no members) when not an object
		var loginOK, idOK bool
		login, loginOK = obj["login"].(string)
		a.ID, idOK = obj["id"].(string)
		if len(obj) != 2 || !loginOK || !idOK {
			return ForgeAccount{}, fmt.Errorf(`%s is not a login nor an object of "id" and "login" strings`, forge)
		}
		if err := attest.ValidForgeAccountID(a.ID); err != nil {
			return ForgeAccount{}, err
		}
	}
	if err := attest.ValidForgeAccount(forge, login); err != nil {
		return ForgeAccount{}, err
	}
	a.Login = login
	return a, nil
}

// SetForgeAccount maps person's account on forge to login with the
// numeric account id id ("" for none: the login alone identifies it, as
// in policies before ids); login "" removes it. A rules change.
func (p *Policy) SetForgeAccount(base *Policy, person, forge, login, id string, now time.Time) error {
	if _, ok := p.Person(person); !ok {
		return invalid("no person named %s (see git secure policy list)", person)
	}
	if login == "" && id != "" {
		return invalid("an account id needs the account's login")
	}
	if login != "" {
		if err := attest.ValidForgeAccount(forge, login); err != nil {
			return invalid("%v", err)
		}
		if other, ok := p.PersonByForgeAccount(forge, login); ok && other.Name != person {
			return invalid("%s account %s already belongs to %s", forge, login, other.Name)
		}
	}
	if id != "" {
		if err := attest.ValidForgeAccountID(id); err != nil {
			return invalid("%v", err)
		}
		if other := p.personByForgeID(forge, id); other != "" && other != person {
			return invalid("%s account id %s already belongs to %s", forge, id, other)
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
	switch {
	case login == "":
		delete(accts, forge)
	case id == "":
		accts[forge] = login
	default:
		accts[forge] = map[string]any{"id": id, "login": login}
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

// AddForgeApp trusts a forge bridge bound to repository of forge: a
// root change.
func (p *Policy) AddForgeApp(base *Policy, name string, pub ssh.PublicKey, forge, repository string, now time.Time) error {
	if !validName(name) {
		return invalid("forge app name %q: use letters, digits, '.', '_' or '-' (at most 64)", name)
	}
	if err := attest.ValidForgeRepository(forge, repository); err != nil {
		return invalid("forge app %s: %v", name, err)
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
	return p.writeForgeApp(base, name, pub, forge, repository, now)
}

// writeForgeApp stores forge app name as root.json holds it: its key
// bound to repository of forge.
func (p *Policy) writeForgeApp(base *Policy, name string, pub ssh.PublicKey, forge, repository string, now time.Time) error {
	raw, _ := p.Root.Signed.UnrecognizedFields[fieldForgeApps].(map[string]any)
	if raw == nil {
		raw = map[string]any{}
	}
	raw[name] = map[string]any{"forge": forge, "key": authorizedLine(pub), "repository": repository}
	p.Root.Signed.UnrecognizedFields[fieldForgeApps] = raw
	return p.reindexRoot(base, now)
}

// BindForgeApp binds forge app name, keeping its key, to repository of
// forge: a root change. An app added before repository binding gets one
// this way (its older records stop counting: docs/format.md).
func (p *Policy) BindForgeApp(base *Policy, name, forge, repository string, now time.Time) error {
	if err := attest.ValidForgeRepository(forge, repository); err != nil {
		return invalid("forge app %s: %v", name, err)
	}
	apps := p.ForgeApps()
	i := slices.IndexFunc(apps, func(a *ForgeApp) bool { return a.Name == name })
	if i < 0 {
		return invalid("no forge app named %s (see git secure policy list)", name)
	}
	if apps[i].Forge == forge && apps[i].Repository == repository {
		return invalid("forge app %s is already bound to %s %s", name, forge, repository)
	}
	return p.writeForgeApp(base, name, apps[i].Public, forge, repository, now)
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
