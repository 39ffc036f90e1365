package verify_test

import (
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// A run limited to named refs (git secure verify refs/tags/v2.0, as the
// README says to judge a release tag) judges a new named ref's files
// against the recorded states of the other refs its path rule covers, so
// it must judge those refs' entries too: mallory's own entry moving dev to
// a change of src/crypto (which needs alice) made the base that hid the
// same change in her new tag, and the tag verified while a full run failed
// (findings/03-named-ref-trusts-unjudged-base.sh).
func TestNamedRefJudgesItsBases(t *testing.T) {
	tmpl := NewScenarioTemplate(t)
	setup := func(t *testing.T) *ScenarioFixture {
		f := tmpl.Clone(t)
		f.AddPerson("mallory", "mallory")
		f.AddRule(policy.Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"mallory", "alice"}})
		f.AddRule(policy.Rule{Name: "releases", Refs: []string{"refs/tags/v2*"}, Allow: []string{"mallory"}})
		f.AddRule(policy.Rule{Name: "crypto", Paths: []string{"src/crypto/**"}, Allow: []string{"alice"}})
		f.Apply("alice")
		f.S.Git(f.Dir, "checkout", "-q", "-b", "dev")
		return f
	}
	named := verify.Options{Refs: []string{"refs/tags/v2.0"}}

	t.Run("an unauthorized base", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.S.Commit(f.Dir, "src/crypto/aes.c", "evil\n", "evil")
		evil := f.Ref("refs/heads/dev")
		f.Forge("mallory", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/dev", New: evil})
		f.Forge("mallory", &rsl.Entry{Type: rsl.TypeRef, Ref: "refs/tags/v2.0", New: evil},
			gitrepo.RefUpdate{Name: "refs/tags/v2.0", New: evil})
		f.MustFail(verify.Options{}, verify.ErrUnauthorized, "refs/heads/dev", "needs 1 of alice", "src/crypto/aes.c")
		f.MustFail(named, verify.ErrUnauthorized, "refs/heads/dev", "needs 1 of alice", "src/crypto/aes.c")
	})

	t.Run("an authorized base", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.S.Commit(f.Dir, "docs/notes.txt", "notes\n", "notes")
		f.Record("mallory", "refs/heads/dev")
		f.S.Git(f.Dir, "tag", "v2.0")
		f.Record("mallory", "refs/tags/v2.0")
		f.MustVerify(verify.Options{})
		f.MustVerify(named)
	})
}
