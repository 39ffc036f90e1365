package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
)

// TestCLIDelegate: delegate, sign --file, apply, list --json and --file,
// remove-delegation, and the refusals that name what to do.
func TestCLIDelegate(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--key", h.Priv("alice"))
	h.Want(0, "policy", "add-person", "alice", "--key", h.Pub("alice"))
	h.Want(0, "policy", "add-person", "bob", "--key", h.Pub("bob"))
	h.Want(0, "policy", "add-person", "carol", "--key", h.Pub("carol"))
	h.Want(0, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice")
	if r := h.Want(2, "policy", "delegate", "sec", "--path", "src/crypto/**", "--key", "nobody"); !strings.Contains(r.Stderr, "--key nobody: no person or team of that name") {
		t.Errorf("unknown signer:\n%s", r)
	}
	// A public key file names its person.
	r := h.Want(0, "policy", "delegate", "sec", "--path", "src/crypto/**", "--key", h.Pub("bob"), "--terminating")
	if !strings.Contains(r.Stdout, "rule file sec: 0 of 1 signatures (threshold 1); not yet signed by: bob") {
		t.Errorf("status after delegate:\n%s", r)
	}
	if r := h.Want(1, "policy", "sign", "--file", "sec", "--key", h.Priv("carol")); !strings.Contains(r.Stderr, "is not the key of a signer of rule file sec (its delegation lists bob)") {
		t.Errorf("carol signing sec:\n%s", r)
	}
	h.Want(0, "policy", "sign", "--file", "sec", "--key", h.Priv("bob"))
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	// Bob keeps his file alone.
	if r := h.Want(2, "policy", "add-rule", "net", "--file", "sec", "--ref", "refs/heads/main", "--path", "src/net/**", "--allow", "carol"); !strings.Contains(r.Stderr, "covers src/net/**, beyond sec's paths src/crypto/**") {
		t.Errorf("rule beyond the namespace:\n%s", r)
	}
	h.Want(0, "policy", "add-rule", "aes", "--file", "sec", "--ref", "refs/heads/main", "--path", "src/crypto/aes/**", "--allow", "carol")
	h.Want(0, "policy", "apply", "--file", "sec", "--key", h.Priv("bob"))
	// A widened file staged by hand (not through add-rule) is refused
	// at apply, naming the rule and the namespace.
	h.Want(0, "policy", "add-rule", "other", "--file", "sec", "--ref", "refs/heads/main", "--path", "src/crypto/rsa/**", "--allow", "carol")
	widened := widenStaged(t, h.Dir, "sec")
	// Staged by hand, the change is not this clone's: it is refused until
	// named, and the refusal shows the widened rule.
	if r := h.Want(1, "policy", "apply", "--file", "sec", "--key", h.Priv("bob")); !strings.Contains(r.Stderr, "adds rule grab in rule file sec (ref refs/heads/main, path src/**, 1 of carol)") ||
		!strings.Contains(r.Stderr, "--staged "+widened[:12]) {
		t.Errorf("apply of a foreign widened file without --staged:\n%s", r)
	}
	if r := h.Want(1, "policy", "apply", "--file", "sec", "--staged", widened, "--key", h.Priv("bob")); !strings.Contains(r.Stderr, "rule file sec reaches beyond its delegation: rule grab covers src/**, beyond sec's paths src/crypto/**") {
		t.Errorf("apply of a widened file:\n%s", r)
	}
	h.Want(0, "policy", "discard")
	r = h.Want(0, "policy", "list", "--json")
	var pol struct {
		Rules       []struct{ Name string } `json:"rules"`
		Delegations []struct {
			Name        string   `json:"name"`
			Chain       []string `json:"chain"`
			Paths       []string `json:"paths"`
			Signers     []string `json:"signers"`
			Terminating bool     `json:"terminating"`
			Version     int64    `json:"version"`
			SignedBy    []string `json:"signedBy"`
			Untrusted   string   `json:"untrusted"`
			Rules       []struct {
				Name  string   `json:"name"`
				Allow []string `json:"allow"`
			} `json:"rules"`
		} `json:"delegations"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &pol); err != nil {
		t.Fatal(err)
	}
	if len(pol.Delegations) != 1 {
		t.Fatalf("delegations: %s", r.Stdout)
	}
	d := pol.Delegations[0]
	if d.Name != "sec" || d.Version != 2 || !d.Terminating || d.Untrusted != "" || len(d.SignedBy) != 1 || d.SignedBy[0] != "bob" || len(d.Rules) != 1 || d.Rules[0].Name != "aes" {
		t.Fatalf("delegation %+v", d)
	}
	r = h.Want(0, "policy", "list", "--file", "sec")
	if !strings.Contains(r.Stdout, "path src/crypto/** (via rules keys -> sec, terminating): 1 of bob sign it; v2 signed by bob") {
		t.Errorf("list --file sec:\n%s", r)
	}
	if r := h.Want(2, "policy", "list", "--file", "nope"); !strings.Contains(r.Stderr, "no rule file named nope") {
		t.Errorf("list --file nope:\n%s", r)
	}
	// Bob removes his rule alone too.
	if r := h.Want(2, "policy", "remove-rule", "nope", "--file", "sec"); !strings.Contains(r.Stderr, "rule file sec has no rule named nope") {
		t.Errorf("remove-rule nope:\n%s", r)
	}
	h.Want(0, "policy", "remove-rule", "aes", "--file", "sec")
	h.Want(0, "policy", "apply", "--file", "sec", "--key", h.Priv("bob"))
	if r := h.Want(0, "policy", "list", "--file", "sec"); !strings.Contains(r.Stdout, "v3 signed by bob") || !strings.Contains(r.Stdout, "(no rules)") {
		t.Errorf("after remove-rule --file:\n%s", r)
	}
	// Removing a person a delegation names is refused; the delegation goes
	// with the rules keys' signature.
	if r := h.Want(2, "policy", "remove-person", "bob"); !strings.Contains(r.Stderr, "delegation sec (of the top-level rules) names bob") {
		t.Errorf("remove bob:\n%s", r)
	}
	h.Want(0, "policy", "discard")
	h.Want(0, "policy", "remove-delegation", "sec")
	h.Want(0, "policy", "apply", "--key", h.Priv("alice"))
	r = h.Want(0, "policy", "list", "--json")
	if strings.Contains(r.Stdout, `"delegations"`) {
		t.Errorf("delegations still listed:\n%s", r.Stdout)
	}
}

// widenStaged adds to rule file name of the staged change a rule on src/**
// by hand, keeping the staged commit's parent, and returns the new staged
// commit.
func widenStaged(t *testing.T, dir, name string) string {
	t.Helper()
	g, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h, ok, err := g.ResolveRef(policy.StagingRef)
	if err != nil || !ok {
		t.Fatalf("no staged change: %v", err)
	}
	c, err := g.ReadCommit(h)
	if err != nil {
		t.Fatal(err)
	}
	staged, err := policy.Load(g, h)
	if err != nil {
		t.Fatal(err)
	}
	root, targets, err := staged.Encode()
	if err != nil {
		t.Fatal(err)
	}
	files, err := staged.EncodeRuleFiles()
	if err != nil {
		t.Fatal(err)
	}
	grab := []byte(`"roles":[{"keyids":[],"name":"grab","paths":["git:refs/heads/main","file:src/**"],"terminating":false,"threshold":1,"x-git-secure-allow":["carol"]},`)
	files[name] = bytes.Replace(files[name], []byte(`"roles":[`), grab, 1)
	p, err := policy.ParseFiles(root, targets, files)
	if err != nil {
		t.Fatal(err)
	}
	nh, err := policy.Save(g, p, c.Parents[0], c.Author, "widened by hand")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.UpdateRefs([]gitrepo.RefUpdate{{Name: policy.StagingRef, Old: h, New: nh}}, "test: widen"); err != nil {
		t.Fatal(err)
	}
	return nh.String()
}
