package policy

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// A forge app is a root change whose key is of its own and that no other
// lookup knows; forge accounts are a rules change, one person per account
// (case-insensitive), dropped with the person; both survive encoding.
func TestForgeAppsAndAccounts(t *testing.T) {
	root, bob, bridge := newTestKey(t, "root"), newTestKey(t, "bob"), newTestKey(t, "bridge")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	must(t, p.AddPerson(base, "bob", []ssh.PublicKey{bob.Pub}, t0))
	must(t, p.SetForgeAccount(base, "bob", "github", "Bob-GH", "", t0))
	must(t, p.AddForgeApp(base, "ci-bridge", bridge.Pub, "github", "acme/widget", t0))
	if p.Root.Signed.Version != base.Root.Signed.Version+1 || p.Targets.Signed.Version != base.Targets.Signed.Version+1 {
		t.Errorf("versions root %d targets %d: both must move by one", p.Root.Signed.Version, p.Targets.Signed.Version)
	}
	r, tg, err := p.Encode()
	must(t, err)
	q, err := Parse(r, tg)
	must(t, err)
	if !bytes.Contains(r, []byte(`"x-git-secure-forge-apps":{"ci-bridge":{"forge":"github","key":"ssh-ed25519 `)) || !bytes.Contains(r, []byte(`","repository":"acme/widget"}}`)) || !bytes.Contains(tg, []byte(`"x-git-secure-forge-accounts":{"bob":{"github":"Bob-GH"}}`)) {
		t.Fatalf("stored form:\n%s\n%s", r, tg)
	}
	if person, ok := q.PersonByForgeAccount("github", "bob-gh"); !ok || person.Name != "bob" {
		t.Errorf("PersonByForgeAccount(github, bob-gh) = %v, %v", person, ok)
	}
	if _, ok := q.PersonByForgeAccount("gitlab", "bob-gh"); ok {
		t.Error("a GitHub account maps a GitLab account")
	}
	if _, ok := q.LookupForgeAppKey(bridge.FP); !ok {
		t.Error("LookupForgeAppKey does not know the bridge")
	}
	for _, fp := range []string{root.FP, bob.FP} {
		if _, ok := q.LookupForgeAppKey(fp); ok {
			t.Errorf("LookupForgeAppKey knows %s", fp)
		}
	}
	if _, ok := q.LookupKey(bridge.FP); ok {
		t.Error("the bridge key is a key entries, approvals or roots are checked against")
	}
	// One account, one person.
	carol := newTestKey(t, "carol")
	must(t, q.AddPerson(base, "carol", []ssh.PublicKey{carol.Pub}, t0))
	if err := q.SetForgeAccount(base, "carol", "github", "BOB-gh", "", t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "already belongs to bob") {
		t.Errorf("second person for one account: %v", err)
	}
	for _, login := range []string{"bob_gh", "-bob", "", strings.Repeat("b", 40)} {
		if login == "" {
			continue
		}
		if err := q.SetForgeAccount(base, "carol", "github", login, "", t0); !errors.Is(err, ErrInvalidChange) {
			t.Errorf("GitHub login %q accepted: %v", login, err)
		}
	}
	if err := q.SetForgeAccount(base, "carol", "bitbucket", "carol", "", t0); !errors.Is(err, ErrInvalidChange) {
		t.Errorf("unknown forge accepted: %v", err)
	}
	// The bridge key must be of its own, and unique.
	if err := q.AddForgeApp(base, "other", bob.Pub, "github", "acme/widget", t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "of its own") {
		t.Errorf("a person's key as a bridge: %v", err)
	}
	if err := q.AddForgeApp(base, "ci-bridge", carol.Pub, "github", "acme/widget", t0); !errors.Is(err, ErrInvalidChange) {
		t.Errorf("a second app of one name: %v", err)
	}
	// Removing bob drops his account; removing the app drops the field.
	must(t, q.RemovePerson(base, "bob", t0))
	if _, ok := q.PersonByForgeAccount("github", "bob-gh"); ok {
		t.Error("bob's account outlived him")
	}
	must(t, q.RemoveForgeApp(base, "ci-bridge", t0))
	r, tg, err = q.Encode()
	must(t, err)
	if bytes.Contains(r, []byte("forge-apps")) || bytes.Contains(tg, []byte("forge-accounts")) {
		t.Errorf("fields left behind:\n%s\n%s", r, tg)
	}
	if _, err := Parse(r, tg); err != nil {
		t.Fatal(err)
	}
}

// Hostile stored forms are refused when parsed.
func TestForgeFieldsParseRejects(t *testing.T) {
	root, bob, bridge := newTestKey(t, "root"), newTestKey(t, "bob"), newTestKey(t, "bridge")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	must(t, p.AddPerson(base, "bob", []ssh.PublicKey{bob.Pub}, t0))
	must(t, p.SetForgeAccount(base, "bob", "github", "bob-gh", "", t0))
	must(t, p.AddForgeApp(base, "ci-bridge", bridge.Pub, "github", "acme/widget", t0))
	r, tg, err := p.Encode()
	must(t, err)
	bridgeLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(bridge.Pub)))
	bobLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(bob.Pub)))
	rootLine := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(root.Pub)))
	for _, tc := range []struct {
		name        string
		root, targs []byte
		want        string
	}{
		{"person key as bridge", replaceOnce(t, r, bridgeLine, bobLine), tg, "give the bridge a key of its own"},
		{"root key as bridge", replaceOnce(t, r, bridgeLine, rootLine), tg, "give the bridge a key of its own"},
		{"key with comment", replaceOnce(t, r, bridgeLine, bridgeLine+" me@host"), tg, "canonical SSH public key"},
		{"not a key", replaceOnce(t, r, bridgeLine, "ssh-ed25519 AAAA"), tg, "canonical SSH public key"},
		{"account of nobody", r, replaceOnce(t, tg, `{"bob":{"github"`, `{"eve":{"github"`), "not a person"},
		{"bad login", r, replaceOnce(t, tg, `"bob-gh"`, `"bob gh"`), "not a github account"},
		{"unknown forge", r, replaceOnce(t, tg, `{"github":"bob-gh"}`, `{"gitea":"bob-gh"}`), "unknown forge"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.root, tc.targs)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}

// A person's account may carry its numeric id: a review then counts for
// them only with that id (a login another account holds now never
// inherits them, a record without an id cannot show it is theirs), and
// a review by the id under a new login is explained as a rename. Ids are
// one person's each, and both stored forms (login alone, {id, login})
// parse and re-encode as they are.
func TestForgeAccountIDs(t *testing.T) {
	root, bob, carol := newTestKey(t, "root"), newTestKey(t, "bob"), newTestKey(t, "carol")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	must(t, p.AddPerson(base, "bob", []ssh.PublicKey{bob.Pub}, t0))
	must(t, p.AddPerson(base, "carol", []ssh.PublicKey{carol.Pub}, t0))
	must(t, p.SetForgeAccount(base, "bob", "github", "bob-gh", "583231", t0))
	must(t, p.SetForgeAccount(base, "carol", "github", "carol-gh", "", t0))
	r, tg, err := p.Encode()
	must(t, err)
	if !bytes.Contains(tg, []byte(`"x-git-secure-forge-accounts":{"bob":{"github":{"id":"583231","login":"bob-gh"}},"carol":{"github":"carol-gh"}}`)) {
		t.Fatalf("stored form:\n%s", tg)
	}
	q, err := Parse(r, tg)
	must(t, err)
	if r2, tg2, err := q.Encode(); err != nil || !bytes.Equal(r, r2) || !bytes.Equal(tg, tg2) {
		t.Fatalf("re-encoding changed the policy (%v):\n%s", err, tg2)
	}
	if got := q.ForgeAccount("bob", "github"); got != (ForgeAccount{Login: "bob-gh", ID: "583231"}) || got.String() != "bob-gh (id 583231)" {
		t.Errorf("ForgeAccount(bob) = %+v", got)
	}
	for _, tc := range []struct {
		login, id, person, err string
	}{
		{"Bob-GH", "583231", "bob", ""},
		{"bob-gh", "999", "", "the github login bob-gh now belongs to account id 999, but the policy maps bob's account id 583231 to it: another account with the same login (recycled or renamed) never counts for bob"},
		{"bob-gh", "", "", "the record names no account id and the policy maps bob-gh to bob only as account id 583231: it was recorded by a git-secure before account ids; record the review again (git secure forge record-approvals)"},
		{"robert-gh", "583231", "", "the policy maps no person to the github login robert-gh, but its account id 583231 is bob's, mapped as bob-gh: the account was renamed; a rules key holder updates it (git secure policy set-forge-account bob --github robert-gh --github-id 583231)"},
		{"mallory-gh", "7", "", "the policy maps that account to no person (git secure policy add-person NAME --key FILE --github mallory-gh --github-id ID)"},
		// A person mapped by login alone: any id, or none, counts (the
		// policy has not said which account it is).
		{"carol-gh", "12", "carol", ""},
		{"carol-gh", "", "carol", ""},
	} {
		person, err := q.ForgePerson("github", tc.login, tc.id)
		switch {
		case tc.err == "" && (err != nil || person.Name != tc.person):
			t.Errorf("ForgePerson(%s, %q) = %v, %v; want %s", tc.login, tc.id, person, err, tc.person)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("ForgePerson(%s, %q) = %v, %v; want the error %q", tc.login, tc.id, person, err, tc.err)
		}
	}
	if err := q.SetForgeAccount(base, "carol", "github", "carol-gh", "583231", t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "github account id 583231 already belongs to bob") {
		t.Errorf("one id for two persons: %v", err)
	}
	for _, id := range []string{"0", "0583231", "-1", "12a", strings.Repeat("9", 20)} {
		if err := q.SetForgeAccount(base, "carol", "github", "carol-gh", id, t0); !errors.Is(err, ErrInvalidChange) {
			t.Errorf("account id %q accepted: %v", id, err)
		}
	}
	if err := q.SetForgeAccount(base, "carol", "github", "", "12", t0); !errors.Is(err, ErrInvalidChange) {
		t.Errorf("an id without a login accepted: %v", err)
	}
	// Hostile stored forms are refused.
	for _, tc := range []struct{ name, old, new, want string }{
		{"number id", `{"id":"583231","login":"bob-gh"}`, `{"id":583231,"login":"bob-gh"}`, `not a login nor an object of "id" and "login" strings`},
		{"extra key", `{"id":"583231","login":"bob-gh"}`, `{"id":"583231","login":"bob-gh","x":"y"}`, `not a login nor an object`},
		{"no id", `{"id":"583231","login":"bob-gh"}`, `{"login":"bob-gh"}`, `not a login nor an object`},
		{"leading zero", `"583231"`, `"0583231"`, `forge account id "0583231" is not a decimal number`},
		{"empty id", `"583231"`, `""`, `is not a decimal number`},
		{"bad login", `"login":"bob-gh"`, `"login":"bob_gh"`, `"bob_gh" is not a github account name`},
		{"one id twice", `"carol":{"github":"carol-gh"}`, `"carol":{"github":{"id":"583231","login":"carol-gh"}}`, "github account id 583231 belongs to both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(r, replaceOnce(t, tg, tc.old, tc.new))
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}

// A forge app is bound to one repository of one forge; an app stored as
// a git-secure before binding stored it (the key line alone) still
// parses, bound to nothing, and bind-forge-app binds it keeping its key.
func TestForgeAppBinding(t *testing.T) {
	root, bridge := newTestKey(t, "root"), newTestKey(t, "bridge")
	base, err := New(root.Pub, t0)
	must(t, err)
	p, err := base.Clone()
	must(t, err)
	for _, bad := range [][2]string{{"github", "acme"}, {"github", "acme/widget/x"}, {"gitlab", "widget"}, {"gitlab", "0042"}, {"gitea", "acme/widget"}, {"github", ""}} {
		if err := p.AddForgeApp(base, "ci-bridge", bridge.Pub, bad[0], bad[1], t0); !errors.Is(err, ErrInvalidChange) {
			t.Errorf("AddForgeApp bound to %s %q: %v", bad[0], bad[1], err)
		}
	}
	must(t, p.AddForgeApp(base, "ci-bridge", bridge.Pub, "gitlab", "4242", t0))
	r, tg, err := p.Encode()
	must(t, err)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(bridge.Pub)))
	bound := `{"forge":"gitlab","key":"` + line + `","repository":"4242"}`
	legacy := replaceOnce(t, r, bound, `"`+line+`"`)
	q, err := Parse(legacy, tg)
	must(t, err)
	app := q.ForgeApps()[0]
	if app.Repository != "" || app.Forge != "" || app.Binding() != "no repository" || app.Fingerprint != bridge.FP {
		t.Fatalf("legacy app = %+v", app)
	}
	must(t, q.BindForgeApp(q, "ci-bridge", "github", "acme/widget", t0))
	if app := q.ForgeApps()[0]; app.Binding() != "github acme/widget" || app.Fingerprint != bridge.FP {
		t.Fatalf("bound app = %+v", app)
	}
	if err := q.BindForgeApp(q, "ci-bridge", "github", "acme/widget", t0); !errors.Is(err, ErrInvalidChange) || !strings.Contains(err.Error(), "already bound") {
		t.Errorf("binding again: %v", err)
	}
	for _, tc := range []struct{ name, new, want string }{
		{"no repository", `{"forge":"gitlab","key":"` + line + `"}`, `not an object of "forge", "key" and "repository"`},
		{"extra key", `{"forge":"gitlab","key":"` + line + `","repository":"4242","x":"y"}`, `not an object of`},
		{"number repository", `{"forge":"gitlab","key":"` + line + `","repository":4242}`, `"repository" is missing or not a string`},
		{"bad repository", `{"forge":"github","key":"` + line + `","repository":"4242"}`, `"4242" is not a GitHub repository OWNER/NAME`},
		{"unknown forge", `{"forge":"gitea","key":"` + line + `","repository":"a/b"}`, `unknown forge "gitea"`},
		{"bad key", `{"forge":"gitlab","key":"ssh-ed25519 AAAA","repository":"4242"}`, `not one canonical SSH public key line`},
		{"array", `["` + line + `"]`, `not an object of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(replaceOnce(t, r, bound, tc.new), tg)
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse: %v, want ErrMalformed saying %q", err, tc.want)
			}
		})
	}
}
