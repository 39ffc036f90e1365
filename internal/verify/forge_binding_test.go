package verify

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// A forge review counts only when it is of the repository the app is
// bound to and, for a person mapped with an account id, by that account:
// a login another account holds now (recycled or renamed) never inherits
// the person, a record of another repository never counts, and records
// made before these fields (no repository, no id) count only under a
// policy that does not ask for them. Each refusal is explained.
func TestForgeApproversBindingAndAccountID(t *testing.T) {
	bob, carol, app := forgeSigner(t, 2), forgeSigner(t, 3), forgeSigner(t, 4)
	fx := newForgeFixture(t, app, forgeTestPerson{name: "bob", key: bob, id: "583231"}, forgeTestPerson{name: "carol", key: carol})
	pol, store := fx.pol, fx.store
	// The same policy as a git-secure before binding stored it: the app
	// is its key line alone, bob is mapped by login alone.
	r, tg, err := pol.Encode()
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(app.PublicKey())))
	r = bytes.Replace(r, []byte(`{"forge":"github","key":"`+line+`","repository":"acme/widget"}`), []byte(`"`+line+`"`), 1)
	tg = bytes.Replace(tg, []byte(`{"id":"583231","login":"bob-gh"}`), []byte(`"bob-gh"`), 1)
	legacy, err := policy.Parse(r, tg)
	if err != nil || legacy.ForgeApps()[0].Repository != "" || legacy.ForgeAccount("bob", "github").ID != "" {
		t.Fatalf("legacy policy: %v", err)
	}
	ref, from := "refs/heads/main", gitrepo.Hash{1}
	for i, tc := range []struct {
		name                    string
		account, id, repository string
		bound, legacy           string // the person counted under each policy ("" none)
		note                    string // what the bound policy says of it
	}{
		{"happy path", "bob-gh", "583231", "acme/widget", "bob", "bob", ""},
		{"repository case", "bob-gh", "583231", "ACME/Widget", "bob", "bob", ""},
		{"recycled login", "bob-gh", "999", "acme/widget", "", "bob",
			"github review 1 by bob-gh ignored: the github login bob-gh now belongs to account id 999, but the policy maps bob's account id 583231 to it: another account with the same login (recycled or renamed) never counts for bob"},
		{"renamed account", "robert-gh", "583231", "acme/widget", "", "",
			"github review 1 by robert-gh ignored: the policy maps no person to the github login robert-gh, but its account id 583231 is bob's, mapped as bob-gh: the account was renamed"},
		{"another repository", "bob-gh", "583231", "acme/other", "", "bob",
			"github review 1 by bob-gh ignored: it was recorded for github acme/other, but forge app ci-bridge is bound to github acme/widget: a review of another repository never counts here"},
		{"older record", "bob-gh", "", "", "", "bob",
			"github review 1 by bob-gh ignored: the record names no repository (recorded by a git-secure before repository binding) and forge app ci-bridge is bound to github acme/widget: record the review again (git secure forge record-approvals)"},
		{"older record, id asked", "bob-gh", "", "acme/widget", "", "bob",
			"the record names no account id and the policy maps bob-gh to bob only as account id 583231"},
		{"person mapped by login alone", "carol-gh", "12", "acme/widget", "carol", "carol", ""},
	} {
		to := gitrepo.Hash{byte(10 + i)}
		f := attest.ForgeReview{Ref: ref, From: from, To: to, Forge: "github", Repository: tc.repository, Account: tc.account, AccountID: tc.id, Review: "1", PullRequest: "7", State: attest.ReviewApproved}
		fx.put(t, app, f)
		for _, p := range []struct {
			pol  *policy.Policy
			want string
		}{{pol, tc.bound}, {legacy, tc.legacy}} {
			persons, via, notes, err := ForgeApprovers(store, p.pol, ref, from, to, nil)
			if err != nil || strings.Join(persons, ",") != p.want {
				t.Errorf("%s: persons %v (%v), want %q; notes %q", tc.name, persons, err, p.want, notes)
			}
			if p.want != "" && (len(via) != 1 || via[0].Repository != tc.repository || via[0].AccountID != tc.id) {
				t.Errorf("%s: via %+v", tc.name, via)
			}
		}
		if tc.note != "" {
			_, _, notes, _ := ForgeApprovers(store, pol, ref, from, to, nil)
			if len(notes) != 1 || !strings.Contains(notes[0], tc.note) {
				t.Errorf("%s: notes %q, want %q", tc.name, notes, tc.note)
			}
		}
	}
}
