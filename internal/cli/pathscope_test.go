package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestAddRulePathScope: add-rule says what a path rule without --ref
// covers, warns when no rule names a ref yet, and reads --ref '**' as
// refs/** (a path rule judging every ref); policy list shows the scope.
func TestAddRulePathScope(t *testing.T) {
	h := NewCLIHarness(t)
	h.Want(0, "init", "--key", h.Priv("alice"))
	h.Want(0, "policy", "add-person", "alice", "--key", h.Pub("alice"))

	r := h.Want(0, "policy", "add-rule", "docs", "--path", "doc/**", "--allow", "alice")
	if !strings.Contains(r.Stderr, "warning: rule docs protects its files on the refs that rules name with --ref, and no rule names one yet") ||
		!strings.Contains(r.Stderr, "hint: add a rule for the branches that ship") {
		t.Fatalf("add-rule of a path rule with no ref rule: want a warning and a hint:\n%s", r)
	}
	r = h.Want(0, "policy", "add-rule", "main", "--ref", "refs/heads/main", "--allow", "alice")
	if strings.Contains(r.Stderr, "warning") {
		t.Fatalf("add-rule of a ref rule warns:\n%s", r)
	}
	if r := h.Want(0, "policy", "add-rule", "keys", "--path", "keys/**", "--allow", "alice"); strings.Contains(r.Stderr, "warning") {
		t.Fatalf("add-rule of a path rule once a ref rule exists warns:\n%s", r)
	}
	h.Want(0, "policy", "add-rule", "secrets", "--ref", "**", "--path", "secrets/**", "--allow", "alice")

	var list struct {
		Rules []struct {
			Name     string   `json:"name"`
			Refs     []string `json:"refs"`
			EveryRef bool     `json:"everyRef"`
		} `json:"rules"`
	}
	r = h.Want(0, "policy", "list", "--staged", "--json")
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("policy list --json: %v\n%s", err, r)
	}
	for _, rule := range list.Rules {
		want := map[string][]string{"docs": nil, "main": {"refs/heads/main"}, "keys": nil, "secrets": {"refs/**"}}[rule.Name]
		if !slices.Equal(rule.Refs, want) || rule.EveryRef {
			t.Errorf("rule %s: refs %q everyRef %v, want refs %q", rule.Name, rule.Refs, rule.EveryRef, want)
		}
	}
	r = h.Want(0, "policy", "list", "--staged")
	if !strings.Contains(r.Stdout, "path doc/**, on the refs the ref rules name") || !strings.Contains(r.Stdout, "ref refs/**, path secrets/**:") {
		t.Fatalf("policy list does not show the path rules' scope:\n%s", r)
	}
	r = h.Want(0, "policy", "add-rule", "--help")
	if help := strings.Join(strings.Fields(r.Stdout), " "); !strings.Contains(help, "--path alone protects files on the refs that some rule's --ref names") || !strings.Contains(help, "--ref 'refs/**' (or '**') makes a path rule judge every ref") {
		t.Fatalf("add-rule --help does not say what a path rule covers:\n%s", r)
	}
}
