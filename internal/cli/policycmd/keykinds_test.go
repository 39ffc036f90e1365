package policycmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
)

// TestRunAddPersonKeyKinds: policy add-person --key takes a security key's
// .pub file (with verify-required), and an armored OpenPGP key; policy
// list shows what kind each key is; a weak OpenPGP key is a usage error
// that says why.
func TestRunAddPersonKeyKinds(t *testing.T) {
	r := clitest.New(t)
	r.Init()
	ctx := context.Background()
	dir := t.TempDir()
	sk := keykinds.NewSoftSK(t, "ed25519-sk")
	skFile := filepath.Join(dir, "erin.pub")
	if err := os.WriteFile(skFile, []byte("verify-required "+sk.AuthorizedKey()+" erin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	g := keykinds.NewGPG(t, dir, "Gina <gina@example.com>", "ed25519")
	ascFile := filepath.Join(dir, "gina.asc")
	if err := os.WriteFile(ascFile, g.ExportPublic(), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"erin": skFile, "gina": ascFile} {
		if err := runAddPerson(ctx, &AddPersonOptions{F: r.F(), Args: []string{name}, Keys: []string{file}}); err != nil {
			t.Fatalf("add-person %s: %v", name, err)
		}
		clitest.Contains(t, "add-person", r.Stdout.String(), "staged: add person "+name)
	}
	if err := runList(ctx, &ListOptions{F: r.F(), JSON: true, Staged: true}); err != nil {
		t.Fatal(err)
	}
	var j PolicyJSON
	if err := json.Unmarshal(r.Stdout.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, p := range j.Persons {
		kinds[p.Name] = strings.Join(p.KeyKinds, ",")
	}
	if kinds["erin"] != "sk-ssh-ed25519@openssh.com verify-required" || kinds["gina"] != "openpgp "+g.Fingerprint {
		t.Errorf("key kinds: %v", kinds)
	}
	if err := runList(ctx, &ListOptions{F: r.F(), Staged: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "policy list", r.Stdout.String(), "(openpgp "+g.Fingerprint+")", "(sk-ssh-ed25519@openssh.com verify-required)")

	weak := keykinds.NewGPG(t, t.TempDir(), "Weak <weak@example.com>", "rsa1024")
	weakFile := filepath.Join(dir, "weak.asc")
	if err := os.WriteFile(weakFile, weak.ExportPublic(), 0o600); err != nil {
		t.Fatal(err)
	}
	err := runAddPerson(ctx, &AddPersonOptions{F: r.F(), Args: []string{"weak"}, Keys: []string{weakFile}})
	if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || !strings.Contains(e.Msg, "RSA key of 1024 bits is too short") {
		t.Errorf("add-person with an RSA-1024 OpenPGP key: %v", err)
	}
}
