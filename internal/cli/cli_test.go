package cli

// Command-line tests: cli.Main runs in-process with buffers for stdout and
// stderr, a fixed clock and a map for the variables it reads; the exit code
// and the messages are the contract other tools rely on (0 ok, 1 a check
// failed or a change was refused, 2 usage or environment error).
//
// Main opens the repository with gitrepo.Open, whose git child processes
// inherit the process environment, so every test first points that
// environment at a sandbox (t.Setenv: no user or system git config, fixed
// identity). Tests therefore do not run in parallel.

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
	"github.com/git-secure/git-secure/internal/verify"
)

// CLINow is the fixed clock of the command-line tests.
var CLINow = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// CLIHarness is one sandboxed repository driven through Main.
type CLIHarness struct {
	T    *testing.T
	S    *testutil.Sandbox
	Dir  string
	Keys map[string]testutil.Key
	Vars map[string]string // what Env.Getenv returns
	Now  time.Time
}

// CLIResult is the outcome of one Main run.
type CLIResult struct {
	Args           []string
	Code           int
	Stdout, Stderr string
}

func (r CLIResult) String() string {
	return "git-secure " + strings.Join(r.Args, " ") + " -> exit " + strconv.Itoa(r.Code) + "\n--- stdout:\n" + r.Stdout + "--- stderr:\n" + r.Stderr
}

// NewCLIHarness makes a repository with three commits on main and a tag
// v1.0, and keys alice, bob and carol.
func NewCLIHarness(t *testing.T) *CLIHarness {
	t.Helper()
	s := testutil.NewSandbox(t)
	for _, kv := range s.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	// Nothing from the developer's shell may reach the test's git.
	for _, k := range []string{"SSH_AUTH_SOCK", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	h := &CLIHarness{T: t, S: s, Keys: map[string]testutil.Key{}, Now: CLINow,
		Vars: map[string]string{"HOME": s.Home}}
	h.Dir = s.InitRepo("repo", 3)
	s.Git(h.Dir, "tag", "-a", "v1.0", "-m", "release 1.0")
	for _, name := range []string{"alice", "bob", "carol"} {
		h.Keys[name] = s.NewKey(name, "ed25519")
	}
	return h
}

// Run runs Main with args in the repository.
func (h *CLIHarness) Run(args ...string) CLIResult {
	h.T.Helper()
	var stdout, stderr bytes.Buffer
	env := Env{
		Stdin:  strings.NewReader(""),
		Stdout: &stdout,
		Stderr: &stderr,
		Getenv: func(k string) string { return h.Vars[k] },
		Now:    func() time.Time { return h.Now },
		Dir:    h.Dir,
	}
	code := Main(append([]string{"git-secure"}, args...), env)
	return CLIResult{Args: args, Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// Want runs args and requires exit code code.
func (h *CLIHarness) Want(code int, args ...string) CLIResult {
	h.T.Helper()
	r := h.Run(args...)
	if r.Code != code {
		h.T.Fatalf("want exit %d:\n%s", code, r)
	}
	return r
}

// Priv is the private key file of a named key.
func (h *CLIHarness) Priv(name string) string { return h.Keys[name].Private }

// Pub is the public key file of a named key.
func (h *CLIHarness) Pub(name string) string { return h.Keys[name].Public }

// FP is the SSH fingerprint of a named key.
func (h *CLIHarness) FP(name string) string {
	h.T.Helper()
	data, err := os.ReadFile(h.Pub(name))
	if err != nil {
		h.T.Fatal(err)
	}
	pub, _, err := sign.ParsePublicKey(data)
	if err != nil {
		h.T.Fatal(err)
	}
	return sign.Fingerprint(pub)
}

// Git runs git in the repository.
func (h *CLIHarness) Git(args ...string) string {
	h.T.Helper()
	return h.S.Git(h.Dir, args...)
}

// Setup runs init by alice, adds alice, bob and carol (flags after the
// name, as documented), a rule protect-main (main, 2 of alice and bob) and
// applies it.
func (h *CLIHarness) Setup() {
	h.T.Helper()
	r := h.Want(0, "init", "--key", h.Priv("alice"))
	if !strings.Contains(r.Stdout, "Initialized git-secure") || !strings.Contains(r.Stdout, h.FP("alice")) {
		h.T.Fatalf("init output:\n%s", r)
	}
	for _, name := range []string{"alice", "bob", "carol"} {
		r := h.Want(0, "policy", "add-person", name, "--key", h.Pub(name))
		if !strings.Contains(r.Stdout, "staged: add person "+name) {
			h.T.Fatalf("add-person output:\n%s", r)
		}
	}
	h.Want(0, "policy", "add-rule", "protect-main", "--ref", "refs/heads/main", "--allow", "alice", "--allow", "bob", "--threshold", "2")
	r = h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	if !strings.Contains(r.Stdout, "policy applied") {
		h.T.Fatalf("apply output:\n%s", r)
	}
}

// VerifyJSON is the document verify --json writes.
type VerifyJSON struct {
	OK       bool `json:"ok"`
	Problems []struct {
		Entry uint64 `json:"entry"`
		Ref   string `json:"ref"`
		Rule  string `json:"rule"`
		Kind  string `json:"kind"`
		Hint  string `json:"hint"`
	} `json:"problems"`
	Result *struct {
		Entries int `json:"entries"`
	} `json:"result"`
}

// ParseVerifyJSON decodes verify --json output strictly.
func ParseVerifyJSON(t *testing.T, r CLIResult) VerifyJSON {
	t.Helper()
	var v VerifyJSON
	dec := json.NewDecoder(strings.NewReader(r.Stdout))
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("verify --json output does not parse: %v\n%s", err, r)
	}
	if dec.More() {
		t.Fatalf("verify --json wrote more than one document:\n%s", r)
	}
	return v
}

func TestCLIInitAndVerify(t *testing.T) {
	h := NewCLIHarness(t)
	r := h.Want(0, "init", "--key", h.Priv("alice"))
	if !strings.Contains(r.Stdout, "Recorded 3 entries: the policy and 2 refs") {
		t.Errorf("init output:\n%s", r)
	}
	r = h.Want(0, "verify")
	if !strings.Contains(r.Stdout, "verified 3 entries") || !strings.Contains(r.Stdout, "refs/heads/main") {
		t.Errorf("verify output:\n%s", r)
	}
	if r.Stderr != "" {
		t.Errorf("verify ok wrote to stderr:\n%s", r)
	}
	// A second init is a usage error and changes nothing.
	r = h.Want(2, "init", "--key", h.Priv("bob"))
	if !strings.Contains(r.Stderr, "git-secure: error:") || !strings.Contains(r.Stderr, "already set up") {
		t.Errorf("second init:\n%s", r)
	}
	h.Want(0, "verify")
}

func TestCLIWorkflowAndTampering(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	h.Want(0, "verify")

	// alice records a new commit on main: allowed, but bob must approve.
	h.S.Commit(h.Dir, "new.txt", "new\n", "new work")
	b := h.Git("rev-parse", "HEAD")
	r := h.Want(0, "rsl", "record", "main", "--key", h.Priv("alice"))
	if !strings.Contains(r.Stdout, "recorded entry #") || !strings.Contains(r.Stderr, "git-secure: note:") || !strings.Contains(r.Stderr, "protect-main") {
		t.Errorf("record output should say that protect-main needs an approval:\n%s", r)
	}
	r = h.Want(1, "verify")
	if !strings.Contains(r.Stderr, "threshold not met") || !strings.Contains(r.Stderr, "rule protect-main") {
		t.Errorf("verify before approval:\n%s", r)
	}
	r = h.Want(0, "attest", "approve", "main", "--to", b, "--key", h.Priv("bob"))
	if !strings.Contains(r.Stdout, "bob approves refs/heads/main") {
		t.Errorf("approve output:\n%s", r)
	}
	h.Want(0, "verify")

	// carol is a person but the rule does not allow her: refused, exit 1.
	h.S.Commit(h.Dir, "carol.txt", "carol\n", "carol's work")
	r = h.Want(1, "rsl", "record", "main", "--key", h.Priv("carol"))
	if !strings.Contains(r.Stderr, "git-secure: error:") || !strings.Contains(r.Stderr, "rule protect-main") {
		t.Errorf("refused record:\n%s", r)
	}

	// Tampering: main rewritten without an entry (not a fast-forward).
	h.Git("update-ref", "refs/heads/main", h.Git("commit-tree", b+"^{tree}", "-p", b+"~1", "-m", "rewritten"))
	r = h.Want(1, "verify")
	for _, want := range []string{"git-secure: error:", "git-secure: hint:", "refs/heads/main", "without an entry", "verification FAILED"} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("verify after tampering: stderr lacks %q:\n%s", want, r)
		}
	}

	r = h.Want(1, "verify", "--json")
	v := ParseVerifyJSON(t, r)
	if v.OK || len(v.Problems) == 0 {
		t.Fatalf("verify --json after tampering: ok=%v problems=%d\n%s", v.OK, len(v.Problems), r)
	}
	found := false
	for _, p := range v.Problems {
		found = found || (p.Kind == verify.ErrUnrecorded.Error() && p.Ref == "refs/heads/main" && p.Hint != "")
	}
	if !found {
		t.Errorf("verify --json: no problem of kind %q for refs/heads/main with a hint:\n%s", verify.ErrUnrecorded, r)
	}
	if strings.Contains(r.Stderr, "verification FAILED") {
		t.Errorf("verify --json also printed the human report on stderr:\n%s", r)
	}
}

func TestCLIVerifyJSONOK(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	r := h.Want(0, "verify", "--json")
	v := ParseVerifyJSON(t, r)
	if !v.OK || len(v.Problems) != 0 || v.Result == nil || v.Result.Entries != 4 {
		t.Errorf("verify --json: %+v\n%s", v, r)
	}
}

func TestCLIUsageErrors(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--bogus"}, "flag provided but not defined"},
		{[]string{"rsl", "record"}, "exactly one REF"},
		{[]string{"rsl", "record", "main", "dev"}, "exactly one REF"},
		{[]string{"policy", "add-person", "dave"}, `Required flag "key"`},
		{[]string{"policy", "add-person", "dave", "--key", "/nonexistent.pub"}, "read key /nonexistent.pub"},
		{[]string{"trust", "set-threshold", "two"}, "is not a number"},
		{[]string{"attest", "approve", "main"}, `Required flag "to"`},
		{[]string{"rsl", "record", "main"}, "no signing key"},
		{[]string{"policy", "apply", "--key", "/nonexistent"}, "nothing is staged"},
	} {
		r := h.Run(tc.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "git-secure: error:") || !strings.Contains(r.Stderr, tc.want) {
			t.Errorf("want exit 2 with %q on stderr:\n%s", tc.want, r)
		}
	}

	t.Run("not a repository", func(t *testing.T) {
		h2 := *h
		h2.T = t
		h2.Dir = t.TempDir()
		r := h2.Run("verify")
		if r.Code != 2 || !strings.Contains(r.Stderr, "not in a git repository") {
			t.Errorf("want exit 2 outside a repository:\n%s", r)
		}
	})

	t.Run("repository without a log", func(t *testing.T) {
		h2 := *h
		h2.T = t
		h2.Dir = h.S.InitRepo("plain", 1)
		r := h2.Run("verify")
		if r.Code != 2 || !strings.Contains(r.Stderr, "git secure init") {
			t.Errorf("want exit 2 with a hint to init:\n%s", r)
		}
	})

	t.Run("unknown command", func(t *testing.T) {
		r := h.Run("frobnicate")
		if r.Code != 2 || !strings.Contains(r.Stderr, "frobnicate") {
			t.Errorf("want exit 2 naming the unknown command:\n%s", r)
		}
	})
}

func TestCLIFlagsAfterArguments(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--key", h.Priv("alice"))
	// Documented order (flags after NAME), and the flag-first order.
	h.Want(0, "policy", "add-person", "bob", "--key", h.Pub("bob"))
	h.Want(0, "policy", "add-person", "--key", h.Pub("carol"), "carol")
	// Repeated flags after the name, and a private key file for --key.
	h.Want(0, "policy", "add-rule", "release", "--ref", "refs/heads/release", "--allow", "bob", "--allow", "carol")
	h.Want(0, "policy", "add-person", "alice", "--key", h.Priv("alice"))
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	r := h.Want(0, "policy", "list", "--json")
	var pol struct {
		Persons []struct {
			Name string   `json:"name"`
			Keys []string `json:"keys"`
		} `json:"persons"`
		Rules []struct {
			Name  string   `json:"name"`
			Refs  []string `json:"refs"`
			Allow []string `json:"allow"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &pol); err != nil {
		t.Fatalf("policy list --json: %v\n%s", err, r)
	}
	got := map[string]string{}
	for _, p := range pol.Persons {
		if len(p.Keys) == 1 {
			got[p.Name] = p.Keys[0]
		}
	}
	for _, name := range []string{"alice", "bob", "carol"} {
		if got[name] != h.FP(name) {
			t.Errorf("person %s has key %q, want %s", name, got[name], h.FP(name))
		}
	}
	if len(pol.Rules) != 1 || pol.Rules[0].Name != "release" || strings.Join(pol.Rules[0].Allow, ",") != "bob,carol" || strings.Join(pol.Rules[0].Refs, ",") != "refs/heads/release" {
		t.Errorf("rules %+v", pol.Rules)
	}
	// A value after "--" stays positional even when it looks like a flag.
	r = h.Run("policy", "add-person", "--key", h.Pub("bob"), "--", "--weird")
	if r.Code != 2 || !strings.Contains(r.Stderr, "person name") {
		t.Errorf("a flag-like name after -- should reach add-person as the NAME and be refused as a bad name:\n%s", r)
	}
}

func TestCLIApplyBelowThreshold(t *testing.T) {
	h := NewCLIHarness(t)
	h.Setup()
	h.Want(0, "trust", "add-rules-key", h.Pub("bob"))
	r := h.Want(0, "trust", "set-rules-threshold", "2")
	if !strings.Contains(r.Stdout, "not yet signed by") {
		t.Errorf("staging output should list the missing signatures:\n%s", r)
	}
	before := h.Git("rev-parse", "refs/secure/policy", "refs/secure/rsl")
	r = h.Want(1, "policy", "apply", "--key", h.Priv("alice"))
	if !strings.Contains(r.Stdout, "not yet signed by: "+h.FP("bob")) {
		t.Errorf("apply below threshold should name bob's key as missing:\n%s", r)
	}
	if !strings.Contains(r.Stderr, "git-secure: error:") || !strings.Contains(r.Stderr, "hint:") || !strings.Contains(r.Stderr, "policy sign") {
		t.Errorf("apply below threshold: stderr should give an error and a hint:\n%s", r)
	}
	if after := h.Git("rev-parse", "refs/secure/policy", "refs/secure/rsl"); after != before {
		t.Fatalf("a refused apply moved the policy or the log:\n%s\n%s", before, after)
	}
	r = h.Want(0, "policy", "apply", "--key", h.Priv("bob"))
	if !strings.Contains(r.Stdout, "policy applied") {
		t.Errorf("apply by bob:\n%s", r)
	}
	h.Want(0, "verify")

	// From now on a rules change needs both: alice alone is refused.
	h.Want(0, "policy", "add-rule", "tags", "--ref", "refs/tags/*", "--allow", "alice")
	r = h.Want(1, "policy", "apply", "--key", h.Priv("alice"))
	if !strings.Contains(r.Stdout, h.FP("bob")) {
		t.Errorf("second apply below threshold should name bob:\n%s", r)
	}
}

func TestCLIHelpMentionsExitCodes(t *testing.T) {
	h := NewCLIHarness(t)
	r := h.Want(0, "verify", "--help")
	for _, want := range []string{"Exit 0", "1 when a check fails", "2 on usage errors"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("verify --help lacks %q:\n%s", want, r)
		}
	}
	r = h.Want(0, "--help")
	if !strings.Contains(r.Stdout, "Exit codes: 0") {
		t.Errorf("git-secure --help lacks the exit codes:\n%s", r)
	}
}
