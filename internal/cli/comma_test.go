package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRepeatableFlagsKeepCommas: a repeatable flag's value is taken whole.
// urfave/cli splits slice flags at commas by default: a key file in a
// directory named "keys, old" was unreadable, and --path 'doc/a,b.txt'
// silently became two patterns, "doc/a" and "b.txt", that protect other
// files than the one named.
func TestRepeatableFlagsKeepCommas(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--key", h.Priv("alice"))
	dir := filepath.Join(t.TempDir(), "keys, old")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, "alice.pub")
	b, err := os.ReadFile(h.Pub("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h.Want(0, "policy", "add-person", "alice", "--key", pub)
	h.Want(0, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice")
	h.Want(0, "policy", "add-rule", "doc", "--path", "doc/a,b.txt", "--allow", "alice")

	var list struct {
		Rules []struct {
			Name  string   `json:"name"`
			Paths []string `json:"paths"`
		} `json:"rules"`
	}
	r := h.Want(0, "policy", "list", "--staged", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("policy list --json: %v\n%s", err, r)
	}
	for _, rule := range list.Rules {
		if rule.Name == "doc" && !slices.Equal(rule.Paths, []string{"doc/a,b.txt"}) {
			t.Errorf("rule doc has paths %q, want the one pattern given, doc/a,b.txt", rule.Paths)
		}
	}
}
