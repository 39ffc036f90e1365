package hostile

import (
	"fmt"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// TestPathRuleDeletion: a rule protecting src/crypto/** on the release
// branches (no ref rule on them) must stop bob, a person it does not
// allow, from taking the protected files off a release branch by deleting
// it (and recreating it without them). Path rules used to be skipped for a
// deletion, so bob's signed entry deleting rel/1 verified. A deletion
// removes every file: the rule applies when the deleted tree holds a file
// it protects, and not when it holds none.
func TestPathRuleDeletion(t *testing.T) {
	for _, tc := range []struct {
		name   string
		crypto bool // the deleted branch holds src/crypto/aes.c
	}{
		{"branch with protected files", true},
		{"branch without protected files", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 1)
			f.stage(func(p, base *policy.Policy, now time.Time) error {
				return p.AddRule(base, policy.Rule{Name: "crypto", Refs: []string{"refs/heads/rel/*"}, Paths: []string{"src/crypto/**"}, Allow: []string{"alice"}, Threshold: 1}, now)
			})
			if _, _, err := f.r.Apply(f.keys["alice"].Private); err != nil {
				t.Fatalf("apply: %v", err)
			}
			path := "notes.txt"
			if tc.crypto {
				path = "src/crypto/aes.c"
			}
			f.s.Git(f.dir, "checkout", "-q", "--detach") // main stays
			c, err := gitrepo.ParseHash(f.s.Commit(f.dir, path, "aes\n", "release"))
			if err != nil {
				t.Fatal(err)
			}
			_, tip := f.tip()
			f.appendRaw("alice", []byte(entryMsg(tip.Number+1, "refs/heads/rel/1", gitrepo.ZeroHash, c)))
			f.setRef("refs/heads/rel/1", gitrepo.ZeroHash, c)
			if _, err := f.verify(); err != nil {
				t.Fatalf("alice's release branch does not verify: %v", err)
			}

			// bob signs the deletion.
			n := tip.Number + 2
			msg := fmt.Sprintf("rsl #%d: delete refs/heads/rel/1\n\nformat: %s\nnumber: %d\ntype: ref\nref: refs/heads/rel/1\nold: %s\nnew: %s\n", n, rsl.Format, n, c, gitrepo.ZeroHash)
			f.appendRaw("bob", []byte(msg))
			f.setRef("refs/heads/rel/1", c, gitrepo.ZeroHash)
			if !tc.crypto {
				if _, err := f.verify(); err != nil {
					t.Fatalf("deleting a branch without protected files needs nobody: %v", err)
				}
				return
			}
			f.mustFail("bob's deletion of a release branch holding src/crypto", 1<<30, verify.ErrUnauthorized,
				fmt.Sprintf("entry #%d", n), "rule crypto", "signer bob is not allowed by this rule", "protected files changed: src/crypto/aes.c")
		})
	}
}
