package cli

// Policy depth through the command line: teams and requirements with
// explain, policy check (what would a staged policy have refused), verify
// --at and --attest (signed SLSA verification summaries), and rsl skip.
// Like cli_test.go, these tests set the process environment and do not run
// in parallel.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/policycmd"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// depthCLISetup runs init by alice (no hooks), adds alice, bob and carol,
// and applies rule main: refs/heads/main, 1 of alice and bob.
func depthCLISetup(h *CLIHarness) {
	h.T.Helper()
	h.Want(0, "init", "--no-hooks", "--key", h.Priv("alice"))
	for _, name := range []string{"alice", "bob", "carol"} {
		h.Want(0, "policy", "add-person", name, "--key", h.Pub(name))
	}
	h.Want(0, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
}

var depthEntryRE = regexp.MustCompile(`recorded (?:entry|annotation) #(\d+)`)

// depthEntry returns the entry number a record or skip printed.
func depthEntry(t *testing.T, r CLIResult) uint64 {
	t.Helper()
	m := depthEntryRE.FindStringSubmatch(r.Stdout)
	if m == nil {
		t.Fatalf("no entry number in the output:\n%s", r)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// depthRecord commits a file on the checked-out branch and records ref
// with key; it returns the commit and the entry number.
func depthRecord(h *CLIHarness, ref, key, file string) (string, uint64) {
	h.T.Helper()
	c := h.S.Commit(h.Dir, file, file+"\n", "change "+file)
	return c, depthEntry(h.T, h.Want(0, "rsl", "record", ref, "--key", h.Priv(key)))
}

// depthContains fails unless s contains every want.
func depthContains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

func TestDepthCLITeamsAndExplain(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--no-hooks", "--key", h.Priv("alice"))
	for _, name := range []string{"alice", "bob", "carol"} {
		h.Want(0, "policy", "add-person", name, "--key", h.Pub(name))
	}
	h.Want(0, "policy", "add-team", "developers", "--member", "alice", "--member", "bob")
	h.Want(0, "policy", "add-team", "security", "--member", "carol")
	h.Want(0, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--require", "team:developers=2", "--require", "team:security=1")
	// Refused edits: usage errors naming the problem.
	r := h.Want(2, "policy", "add-rule", "big", "--ref", "refs/heads/big", "--allow", "team:developers", "--require", "team:security=2")
	depthContains(t, "add-rule with a requirement larger than its team", r.Stderr, "team:security has 1 persons")
	r = h.Want(2, "policy", "remove-person", "carol")
	depthContains(t, "remove-person of a team member", r.Stderr, "carol is a member of team security")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	r = h.Want(0, "policy", "list", "--json")
	var pol policycmd.PolicyJSON
	if err := json.Unmarshal([]byte(r.Stdout), &pol); err != nil {
		t.Fatal(err)
	}
	if len(pol.Rules) != 1 || pol.Rules[0].Threshold != 3 || strings.Join(pol.Rules[0].Require, ",") != "team:developers=2,team:security=1" || len(pol.Teams) != 2 {
		t.Errorf("policy list: %+v", pol)
	}
	h.Want(0, "verify")

	old := h.Git("rev-parse", "main")
	c, n := depthRecord(h, "main", "alice", "feature.txt")
	r = h.Want(1, "verify")
	depthContains(t, "verify after alice's record", r.Stderr, "entry #"+strconv.FormatUint(n, 10), "refs/heads/main, rule main", verify.ErrThreshold.Error(),
		"team:developers needs 1 more", "team:security needs 1 more")
	r = h.Want(1, "explain", "main")
	depthContains(t, "explain main", r.Stdout, "rule main", "counted: alice", "result: NOT satisfied",
		"git secure attest approve refs/heads/main --from "+old+" --to "+c)
	h.Want(0, "attest", "approve", "main", "--to", c, "--key", h.Priv("bob"))
	r = h.Want(1, "verify")
	depthContains(t, "verify after bob's approval", r.Stderr, "rule main", "has 2 (alice, bob)", "team:security needs 1 more")
	if strings.Contains(r.Stderr, "team:developers needs") {
		t.Errorf("developers are complete:\n%s", r)
	}
	h.Want(0, "attest", "approve", "main", "--to", c, "--key", h.Priv("carol"))
	r = h.Want(0, "explain", "main")
	depthContains(t, "explain main after approvals", r.Stdout, "counted: alice, bob, carol", "result: satisfied")
	h.Want(0, "verify")
}

func TestDepthCLIPolicyCheck(t *testing.T) {
	h := NewCLIHarness(t)
	depthCLISetup(h)
	_, nMain := depthRecord(h, "main", "bob", "one.txt")
	h.Git("checkout", "-q", "-b", "feature")
	_, nFeat := depthRecord(h, "feature", "carol", "feature.txt")
	h.Git("checkout", "-q", "main")
	h.Want(0, "verify")

	r := h.Want(0, "policy", "check")
	depthContains(t, "policy check with nothing staged", r.Stdout, "the policy in force (nothing is staged) accepts all")

	// A stricter rule: carol's feature entry would have been refused.
	h.Want(0, "policy", "add-rule", "features", "--ref", "refs/heads/feature*", "--allow", "alice")
	r = h.Want(1, "policy", "check")
	depthContains(t, "policy check of the features rule", r.Stdout, "the staged policy would have refused 1 past update(s)",
		"entry #"+strconv.FormatUint(nFeat, 10), "refs/heads/feature, rule features", verify.ErrUnauthorized.Error(), "carol is not allowed")
	r = h.Want(1, "policy", "check", "--json")
	var out struct {
		OK       bool                  `json:"ok"`
		Problems []cmdutil.ProblemJSON `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("policy check --json: %v\n%s", err, r)
	}
	if out.OK || len(out.Problems) != 1 || out.Problems[0].Entry != nFeat || out.Problems[0].Ref != "refs/heads/feature" ||
		out.Problems[0].Rule != "features" || out.Problems[0].Kind != verify.ErrUnauthorized.Error() {
		t.Errorf("policy check --json: %+v; want one %q problem on entry #%d (refs/heads/feature, rule features)", out, verify.ErrUnauthorized, nFeat)
	}
	// Checking changes nothing: the policy in force still verifies.
	h.Want(0, "verify")
	h.Want(0, "policy", "discard")

	// Stricter still: two developers on main. Both past main entries (init's
	// by alice, nMain by bob) had one.
	h.Want(0, "policy", "add-team", "devs", "--member", "alice", "--member", "bob")
	h.Want(0, "policy", "add-rule", "pair", "--ref", "refs/heads/main", "--require", "team:devs=2")
	r = h.Want(1, "policy", "check")
	depthContains(t, "policy check of the pair rule", r.Stdout, "would have refused 2 past update(s)", "entry #2 ", "entry #"+strconv.FormatUint(nMain, 10)+" ",
		"refs/heads/main, rule pair", verify.ErrThreshold.Error(), "team:devs needs 1 more")
	h.Want(0, "policy", "discard")

	// A rule no past entry breaks.
	h.Want(0, "policy", "add-rule", "tags", "--ref", "refs/tags/v9*", "--allow", "alice")
	r = h.Want(0, "policy", "check")
	depthContains(t, "policy check of the tags rule", r.Stdout, "the staged policy accepts all")
}

func TestDepthCLIVerifyAtAndAttest(t *testing.T) {
	h := NewCLIHarness(t)
	depthCLISetup(h)
	c1, n1 := depthRecord(h, "main", "alice", "one.txt")
	between := h.S.Commit(h.Dir, "between.txt", "between\n", "never recorded by itself")
	c2, n2 := depthRecord(h, "main", "bob", "two.txt")

	r := h.Want(0, "verify", "main", "--at", c1)
	depthContains(t, "verify --at c1", r.Stdout, "was a verified state of refs/heads/main: entry #"+strconv.FormatUint(n1, 10))
	r = h.Want(0, "verify", "main", "--at", c2)
	depthContains(t, "verify --at c2", r.Stdout, "entry #"+strconv.FormatUint(n2, 10))
	r = h.Want(1, "verify", "main", "--at", between)
	depthContains(t, "verify --at an unrecorded commit", r.Stderr, "was never a verified state of refs/heads/main")
	dangling := h.Git("commit-tree", c2+"^{tree}", "-p", c2, "-m", "dangling")
	h.Want(1, "verify", "main", "--at", dangling)
	r = h.Run("verify", "main", "--at", dangling, "--json")
	var at struct {
		OK    bool   `json:"ok"`
		Entry uint64 `json:"entry"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &at); err != nil || at.OK || at.Entry != 0 {
		t.Errorf("verify --at --json for a dangling commit: %+v, %v\n%s", at, err, r)
	}
	r = h.Run("verify", "main", "--at", c1, "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &at); err != nil || !at.OK || at.Entry != n1 || r.Code != 0 {
		t.Errorf("verify --at --json for c1: %+v, %v\n%s", at, err, r)
	}
	// c1 was never a state of the tag.
	h.Want(1, "verify", "v1.0", "--at", c1)
	r = h.Want(2, "verify", "--at", c1)
	depthContains(t, "verify --at without REF", r.Stderr, "exactly one REF")

	out := filepath.Join(t.TempDir(), "vsa.json")
	r = h.Want(0, "verify", "main", "--attest", "--key", h.Priv("carol"), "--out", out)
	depthContains(t, "verify --attest", r.Stderr, "wrote a signed verification summary of refs/heads/main")
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env, err := attest.ParseEnvelope(data)
	if err != nil {
		t.Fatalf("summary envelope: %v\n%s", err, data)
	}
	pubOf := func(name string) ssh.PublicKey {
		b, err := os.ReadFile(h.Pub(name))
		if err != nil {
			t.Fatal(err)
		}
		pub, _, err := sign.ParsePublicKey(b)
		if err != nil {
			t.Fatal(err)
		}
		return pub
	}
	carol := pubOf("carol")
	trust := func(pub ssh.PublicKey) func(string) (ssh.PublicKey, bool) {
		return func(fp string) (ssh.PublicKey, bool) { return pub, fp == sign.Fingerprint(pub) }
	}
	if key, err := env.Verify(trust(carol)); err != nil || sign.Fingerprint(key) != h.FP("carol") {
		t.Fatalf("summary signature with carol's key: %v", err)
	}
	if _, err := env.Verify(trust(pubOf("bob"))); err == nil {
		t.Error("summary verified with bob's key")
	}
	var st struct {
		Type    string `json:"_type"`
		Subject []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
		PredicateType string `json:"predicateType"`
		Predicate     struct {
			Verifier struct {
				ID string `json:"id"`
			} `json:"verifier"`
			ResourceURI        string `json:"resourceUri"`
			VerificationResult string `json:"verificationResult"`
			Policy             struct {
				Digest map[string]string `json:"digest"`
			} `json:"policy"`
			GitSecure map[string]string `json:"gitSecure"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(env.Payload, &st); err != nil {
		t.Fatalf("summary statement: %v\n%s", err, env.Payload)
	}
	policyCommit := h.Git("rev-parse", "refs/secure/policy")
	tip := h.Git("rev-parse", "refs/secure/rsl")
	if st.Type != attest.StatementType || st.PredicateType != "https://slsa.dev/verification_summary/v1" || len(st.Subject) != 1 ||
		!strings.HasSuffix(st.Subject[0].Name, "@refs/heads/main") || len(st.Subject[0].Digest) != 1 || st.Subject[0].Digest["gitCommit"] != c2 {
		t.Errorf("statement %+v; want an in-toto VSA about refs/heads/main at %s", st, c2)
	}
	p := st.Predicate
	if p.VerificationResult != "PASSED" || p.Verifier.ID != attest.VerifierID || p.ResourceURI != st.Subject[0].Name ||
		p.Policy.Digest["gitCommit"] != policyCommit || p.GitSecure["commit"] != c2 || p.GitSecure["ref"] != "refs/heads/main" ||
		p.GitSecure["rslEntry"] != strconv.FormatUint(n2, 10) || p.GitSecure["rslTip"] != tip {
		t.Errorf("predicate %+v; want PASSED for %s at entry #%d, policy %s, tip %s", p, c2, n2, policyCommit, tip)
	}

	// A repository that does not verify gets no summary.
	h.Git("update-ref", "refs/heads/main", h.Git("commit-tree", c2+"^{tree}", "-p", c1, "-m", "rewritten"))
	out2 := filepath.Join(t.TempDir(), "vsa2.json")
	r = h.Want(1, "verify", "main", "--attest", "--key", h.Priv("carol"), "--out", out2)
	depthContains(t, "verify --attest of a rewritten main", r.Stderr, verify.ErrUnrecorded.Error(), "refs/heads/main")
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Errorf("a failed verification wrote a summary (%v)", err)
	}
	h.Want(1, "verify", "main", "--at", c2)
}

func TestDepthCLISkip(t *testing.T) {
	h := NewCLIHarness(t)
	depthCLISetup(h)
	a := h.Git("rev-parse", "main")
	b, nb := depthRecord(h, "main", "alice", "mistake.txt")
	h.Want(0, "verify", "main", "--at", b)

	t.Run("skip by an allowed person rewinds the ref", func(t *testing.T) {
		r := h.Want(0, "rsl", "skip", strconv.FormatUint(nb, 10), "--reason", "pushed by mistake", "--key", h.Priv("bob"))
		depthContains(t, "rsl skip", r.Stdout, "refs/heads/main is now recorded at "+a[:12], "git update-ref refs/heads/main "+a)
		h.Git("reset", "-q", "--hard", a)
		r = h.Want(0, "verify", "--json")
		var v struct {
			OK     bool `json:"ok"`
			Result struct {
				SkippedEntries []uint64 `json:"skippedEntries"`
				Refs           []struct {
					Ref    string `json:"ref"`
					Target string `json:"target"`
					Entry  uint64 `json:"entry"`
				} `json:"refs"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &v); err != nil {
			t.Fatal(err)
		}
		if !v.OK || len(v.Result.SkippedEntries) != 1 || v.Result.SkippedEntries[0] != nb {
			t.Errorf("verify --json: %+v; want entry #%d skipped", v, nb)
		}
		for _, s := range v.Result.Refs {
			if s.Ref == "refs/heads/main" && (s.Target != a || s.Entry != 2) {
				t.Errorf("main recorded at %s (entry #%d), want %s (entry #2)", s.Target, s.Entry, a)
			}
		}
		// The skipped state was never a verified state; the one before is.
		h.Want(1, "verify", "main", "--at", b)
		h.Want(0, "verify", "main", "--at", a)
	})

	t.Run("skip of an entry a later entry builds on is refused", func(t *testing.T) {
		_, n1 := depthRecord(h, "main", "alice", "first.txt")
		_, n2 := depthRecord(h, "main", "alice", "second.txt")
		before := h.Git("rev-parse", "refs/secure/rsl")
		r := h.Want(2, "rsl", "skip", strconv.FormatUint(n1, 10), "--reason", "only the first", "--key", h.Priv("alice"))
		depthContains(t, "rsl skip of a middle entry", r.Stderr, "entry #"+strconv.FormatUint(n2, 10)+" of refs/heads/main builds on the entries you skip")
		if after := h.Git("rev-parse", "refs/secure/rsl"); after != before {
			t.Errorf("a refused skip moved the log")
		}
		h.Want(0, "verify")
	})

	t.Run("skip by a person the rule does not allow is refused before signing", func(t *testing.T) {
		// Verification checks the rewind like any update of main
		// (internal/testing/e2e TestSkipNeedsPathRules forges one); the command
		// refuses to sign it in the first place.
		r := h.Want(0, "rsl", "log", "--json", "-n", "1")
		var last []struct {
			Number uint64 `json:"number"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &last); err != nil || len(last) != 1 {
			t.Fatalf("rsl log: %v\n%s", err, r)
		}
		before := h.Git("rev-parse", "refs/secure/rsl")
		r = h.Want(1, "rsl", "skip", strconv.FormatUint(last[0].Number, 10), "--reason", "carol disagrees", "--key", h.Priv("carol"))
		depthContains(t, "carol's skip", r.Stderr, "skip moves refs/heads/main back", "rule main", "carol", "cannot sign for it")
		if after := h.Git("rev-parse", "refs/secure/rsl"); after != before {
			t.Errorf("a refused skip moved the log")
		}
		h.Want(0, "verify")
	})
}

func TestDepthCLIVerifyAtJSONExitCode(t *testing.T) {
	h := NewCLIHarness(t)
	depthCLISetup(h)
	depthRecord(h, "main", "alice", "one.txt")
	never := h.Git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "never recorded")
	r := h.Want(1, "verify", "main", "--at", never, "--json")
	if !strings.Contains(r.Stdout, `"ok": false`) {
		t.Errorf("verify --at --json:\n%s", r)
	}
}
