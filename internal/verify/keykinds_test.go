package verify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/keykinds"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
	"github.com/git-secure/git-secure/internal/verify"
)

// keyKind is a person key of one kind for the scenario: its public key
// (as the policy gets it from `policy add-person --key FILE`) and the
// --key value that signs with it.
type keyKind struct {
	name string
	make func(t *testing.T, f *ScenarioFixture) (pub ssh.PublicKey, keySpec string)
}

var keyKinds = []keyKind{
	{"sk-ssh-ed25519", skKind("ed25519-sk")},
	{"sk-ecdsa-sha2-nistp256", skKind("ecdsa-sk")},
	{"openpgp", func(t *testing.T, f *ScenarioFixture) (ssh.PublicKey, string) {
		g := keykinds.NewGPG(t, t.TempDir(), "Erin <erin@example.com>", "ed25519")
		t.Setenv("GNUPGHOME", g.Home) // gpg runs with the process environment, as from git
		pub, _, err := sign.ParsePublicKey(g.ExportPublic())
		if err != nil {
			t.Fatal(err)
		}
		return pub, "openpgp:" + g.Fingerprint
	}},
	{"sigstore-oidc", sigstoreKind},
}

// sigstoreKind: erin's keyless identity, signed with through gitsign (git
// config gpg.x509.program: cmd fakegitsign, which signs in offline Rekor
// mode with a test Fulcio and Rekor), whose instance the policy pins (a
// root change by alice). Her signatures are real CMS signatures with a
// Fulcio certificate and an inclusion proof, verified by internal/keyless.
func sigstoreKind(t *testing.T, f *ScenarioFixture) (ssh.PublicKey, string) {
	s := keylesstest.New(t)
	state := t.TempDir()
	s.Save(t, state)
	f.S.Git(f.Dir, "config", "gpg.x509.program", keylesstest.BuildFakeGitsign(t, t.TempDir()))
	t.Setenv("KEYLESSTEST_DIR", state)
	t.Setenv("KEYLESSTEST_ISSUER", "https://accounts.google.com")
	t.Setenv("KEYLESSTEST_SUBJECT", "erin@example.com")
	id := "sigstore-oidc https://accounts.google.com erin@example.com"
	pub, _, err := sign.ParsePublicKey([]byte(id))
	if err != nil {
		t.Fatal(err)
	}
	f.Stage("pin sigstore", func(p, base *policy.Policy, now time.Time) error {
		return p.SetSigstore(base, s.FulcioPEM(), s.RekorPEM(), now)
	})
	f.Apply("alice")
	return pub, id
}

// skKind: a software security key held by an ssh-agent (ssh-add of a
// real sk key file gives the same), signed with through its .pub file.
func skKind(typ string) func(t *testing.T, f *ScenarioFixture) (ssh.PublicKey, string) {
	return func(t *testing.T, f *ScenarioFixture) (ssh.PublicKey, string) {
		dir := t.TempDir()
		k := keykinds.NewSoftSK(t, typ)
		f.R.AgentSocket = keykinds.ServeAgent(t, dir, k)
		line := k.AuthorizedKey() + " erin@example.com\n"
		pubFile := dir + "/id_sk.pub"
		writeTestFile(t, pubFile, line)
		pub, _, err := sign.ParsePublicKey([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		return pub, pubFile
	}
}

// TestKeyKindsEndToEnd: for a security key of each type, an OpenPGP key
// and a keyless Sigstore identity, person erin's key signs an RSL entry, an approval and a policy
// change (her own rule file, applied by her alone), each verified; then
// the key is revoked from the next entry on: an approval she makes with
// it does not count (alice's entry on it stays pending and fails
// verification naming the key), and her next entry fails verification
// naming the key.
func TestKeyKindsEndToEnd(t *testing.T) {
	tmpl := NewScenarioTemplate(t)
	for _, kind := range keyKinds {
		t.Run(kind.name, func(t *testing.T) {
			f := tmpl.Clone(t)
			pub, erin := kind.make(t, f)
			fp := sign.Fingerprint(pub)

			// Policy: erin with her key; dev needs alice and erin; the
			// team/* namespace is delegated to erin's own rule file.
			f.Stage("add person erin", func(p, base *policy.Policy, now time.Time) error {
				return p.AddPerson(base, "erin", []ssh.PublicKey{pub}, now)
			})
			f.AddRule(policy.Rule{Name: "dev", Refs: []string{"refs/heads/dev"}, Allow: []string{"alice", "erin"}, Threshold: 2})
			f.Stage("delegate team", func(p, base *policy.Policy, now time.Time) error {
				return p.Delegate(base, "", policy.Delegation{Name: "team", Refs: []string{"refs/heads/team/*"}, Signers: []string{"erin"}, Threshold: 1}, now)
			})
			if _, err := f.R.SignStagedFile(erin, "team"); err != nil {
				t.Fatalf("erin signs her rule file: %v", err)
			}
			f.Apply("alice")
			f.MustVerify(verify.Options{})
			if got := f.policyKeyType(t, fp); got != pub.Type() {
				t.Fatalf("policy holds erin's key as %q, want %q", got, pub.Type())
			}

			// An approval by erin, an entry by alice.
			f.S.Git(f.Dir, "branch", "dev", "main")
			dev1 := f.Ref("refs/heads/dev")
			if _, err := f.R.Approve("refs/heads/dev", dev1.String(), "", erin); err != nil {
				t.Fatalf("erin approves: %v", err)
			}
			f.Record("alice", "refs/heads/dev")
			f.MustVerify(verify.Options{})

			// An entry by erin, an approval by alice.
			dev2 := f.NewCommit(dev1, "dev 2")
			f.SetRef("refs/heads/dev", dev2)
			f.Approve("alice", "refs/heads/dev", dev2, "")
			if _, err := f.R.Record("refs/heads/dev", erin); err != nil {
				t.Fatalf("erin records: %v", err)
			}
			_, last := f.Tip()
			if got := f.entrySigner(t, last.Number); got != fp {
				t.Fatalf("entry #%d signed by %s, want erin's %s", last.Number, got, fp)
			}
			f.MustVerify(verify.Options{})

			// A policy change by erin alone: a rule in her rule file.
			f.Stage("add rule in team", func(p, base *policy.Policy, now time.Time) error {
				return p.AddRuleIn(base, "team", policy.Rule{Name: "team-main", Refs: []string{"refs/heads/team/*"}, Allow: []string{"erin"}, Threshold: 1}, now)
			})
			if _, _, err := f.R.ApplyFile(erin, "team"); err != nil {
				t.Fatalf("erin applies her rule file alone: %v", err)
			}
			f.MustVerify(verify.Options{})

			// Revoke erin's key from the entry after the revocation's own.
			_, last = f.Tip()
			from := last.Number + 2
			f.Stage("revoke erin", func(p, base *policy.Policy, now time.Time) error {
				return p.RevokeKey(base, fp, from, now)
			})
			f.Apply("alice")
			f.MustVerify(verify.Options{})
			dev3 := f.NewCommit(dev2, "dev 3")
			f.SetRef("refs/heads/dev", dev3)
			f.Approve("alice", "refs/heads/dev", dev3, "")
			// An approval erin makes with the revoked key does not count:
			// alice's entry of dev3 on it is left pending (dev needs both),
			// and verification refuses it naming the key; the entry is
			// then dropped.
			if _, err := f.R.Approve("refs/heads/dev", dev3.String(), "", erin); err != nil {
				t.Fatalf("erin approves with her revoked key: %v", err)
			}
			before, _ := f.Tip()
			res, err := f.R.Record("refs/heads/dev", f.Key("alice"))
			if err != nil || !strings.Contains(strings.Join(res.Pending, "\n"), "rule dev: needs 2 of alice, erin, has 1 (alice)") || !strings.Contains(strings.Join(res.Pending, "\n"), "ignored: signed by "+fp+", a revoked key") {
				t.Fatalf("alice records dev3 on erin's approval by a revoked key: %v, pending %v", err, res)
			}
			f.MustFail(verify.Options{}, verify.ErrThreshold, "needs 2 of alice, erin, has 1 (alice)", "ignored: signed by "+fp+", a revoked key")
			if err := f.G.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: res.ID, New: before}}, "test: drop alice's entry"); err != nil {
				t.Fatal(err)
			}
			// Recording refuses the revoked key, naming it ...
			if _, err := f.R.Record("refs/heads/dev", erin); err == nil || !strings.Contains(err.Error(), "your key "+fp+" is revoked") {
				t.Fatalf("erin records with her revoked key: %v, want a refusal naming %s", err, fp)
			}
			// ... and an entry she signs anyway (by hand, as a thief of the
			// key would) fails verification, naming the key.
			s, err := f.R.LoadSigner(erin)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tip, last := f.Tip()
			who, err := f.R.Ident()
			if err != nil {
				t.Fatal(err)
			}
			e := &rsl.Entry{Number: last.Number + 1, Type: rsl.TypeRef, Ref: "refs/heads/dev", Old: dev2, New: dev3}
			id, err := rsl.Write(f.G, e, tip, who, func(payload []byte) ([]byte, error) { return sign.SignSSHSig(s, payload, sign.NamespaceGit) })
			if err != nil {
				t.Fatal(err)
			}
			if err := f.G.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: tip, New: id}}, "test: entry by a revoked key"); err != nil {
				t.Fatal(err)
			}
			f.MustFail(verify.Options{}, verify.ErrSignature, fp, "revoked from entry #"+scenarioItoa(from))
		})
	}
}

// policyKeyType returns the type of the person key with fingerprint fp in
// the policy in force.
func (f *ScenarioFixture) policyKeyType(t *testing.T, fp string) string {
	t.Helper()
	p, _, err := f.R.CurrentPolicy()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := p.LookupPersonKey(fp)
	if !ok {
		t.Fatalf("no person key %s", fp)
	}
	return k.Type()
}

// entrySigner returns the fingerprint of the key that signed entry n.
func (f *ScenarioFixture) entrySigner(t *testing.T, n uint64) string {
	t.Helper()
	for _, rec := range f.Log() {
		if rec.Entry.Number == n {
			fp, err := sign.SignatureFingerprint(rec.Commit.Signature)
			if err != nil {
				t.Fatal(err)
			}
			return fp
		}
	}
	t.Fatalf("no entry #%d", n)
	return ""
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSecurityKeyFileWithoutAgent: a security key's private key file
// whose key ssh-agent does not hold is signed with by ssh-keygen -Y sign
// (git config gpg.ssh.program, as for git), which talks to the device;
// the user is told to touch the key. The program here stands in for the
// device and refuses, so the arguments and the error are what is checked.
func TestSecurityKeyFileWithoutAgent(t *testing.T) {
	tmpl := NewScenarioTemplate(t)
	f := tmpl.Clone(t)
	dir := t.TempDir()
	k := keykinds.NewSoftSK(t, "ed25519-sk")
	file := k.PrivateKeyFile(t, dir)
	log := filepath.Join(dir, "args")
	fake := filepath.Join(dir, "fake-ssh-keygen")
	writeTestFile(t, fake, "#!/bin/sh\nprintf '%s\\n' \"$@\" > '"+log+"'\necho 'Confirm user presence for key ED25519-SK' >&2\necho 'no security key found' >&2\nexit 1\n")
	if err := os.Chmod(fake, 0o755); err != nil {
		t.Fatal(err)
	}
	f.S.Git(f.Dir, "config", "gpg.ssh.program", fake)
	var prompt strings.Builder
	f.R.Prompt = &prompt
	s, err := f.R.LoadSigner(file)
	if err != nil {
		t.Fatal(err)
	}
	if s.PublicKey().Type() != ssh.KeyAlgoSKED25519 {
		t.Fatalf("signer key %s", s.PublicKey().Type())
	}
	_, err = sign.SignSSHSig(s, []byte("payload"), sign.NamespaceGit)
	if err == nil || !strings.Contains(err.Error(), "no security key found") || !strings.Contains(err.Error(), fake) {
		t.Fatalf("signing without the device: %v", err)
	}
	args, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if string(args) != "-Y\nsign\n-f\n"+file+"\n-n\ngit\n" {
		t.Errorf("ssh-keygen arguments:\n%s", args)
	}
	clitestContains(t, prompt.String(), "touch the security key", sign.Fingerprint(k.PublicKey()), "Confirm user presence")
}

func clitestContains(t *testing.T, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("%q lacks %q", s, w)
		}
	}
}
