package hostile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// policyFiles returns the canonical root.json and targets.json in force.
func (f *fixture) policyFiles() (root, targets []byte) {
	f.t.Helper()
	pol, _, err := f.r.CurrentPolicy()
	if err != nil {
		f.t.Fatal(err)
	}
	root, targets, err = pol.Encode()
	if err != nil {
		f.t.Fatal(err)
	}
	return root, targets
}

// policyCommit writes a policy commit holding root and targets on top of
// the policy in force.
func (f *fixture) policyCommit(root, targets []byte) gitrepo.Hash {
	f.t.Helper()
	rh, err := f.g.WriteObject("blob", root)
	if err != nil {
		f.t.Fatal(err)
	}
	th, err := f.g.WriteObject("blob", targets)
	if err != nil {
		f.t.Fatal(err)
	}
	tree, err := f.g.WriteTree([]gitrepo.TreeEntry{{Mode: 0o100644, Name: policy.RootFile, Hash: rh}, {Mode: 0o100644, Name: policy.TargetsFile, Hash: th}})
	if err != nil {
		f.t.Fatal(err)
	}
	who, _ := f.r.Ident()
	cur := f.ref(policy.Ref)
	h, err := f.g.WriteObject("commit", gitrepo.EncodeCommit(tree, []gitrepo.Hash{cur}, who, who, "hostile policy\n"))
	if err != nil {
		f.t.Fatal(err)
	}
	return h
}

// forgePolicy records a policy change to commit pc, signed by alice (the
// root and rules key), moving refs/secure/policy with it, and returns the
// entry's number and a function that undoes it.
func (f *fixture) forgePolicy(pc gitrepo.Hash) (uint64, func()) {
	f.t.Helper()
	tip, last := f.tip()
	cur := f.ref(policy.Ref)
	e := &rsl.Entry{Number: last.Number + 1, Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: cur, New: pc}
	msg, err := e.Encode()
	if err != nil {
		f.t.Fatal(err)
	}
	id := f.rawEntry("alice", msg, tip)
	if err := f.g.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: tip, New: id}, {Name: policy.Ref, Old: cur, New: pc}}, "hostile"); err != nil {
		f.t.Fatal(err)
	}
	return e.Number, func() {
		if err := f.g.UpdateRefs([]gitrepo.RefUpdate{{Name: rsl.Ref, Old: id, New: tip}, {Name: policy.Ref, Old: pc, New: cur}}, "hostile undo"); err != nil {
			f.t.Fatal(err)
		}
	}
}

// nested returns depth levels of open, then of close.
func nested(open, close string, depth int) []byte {
	return []byte(strings.Repeat(open, depth) + strings.Repeat(close, depth))
}

// hostilePolicies returns root.json/targets.json variations, each of which
// must be refused.
func hostilePolicies(t *testing.T, root, targets []byte) map[string][2][]byte {
	t.Helper()
	rs, ts := string(root), string(targets)
	if !strings.Contains(rs, `"signed":{`) || !strings.Contains(rs, `"_type":"root"`) || !strings.Contains(rs, `"version":1`) {
		t.Fatalf("unexpected root.json shape: %.200s", rs)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, root, "", "  "); err != nil {
		t.Fatal(err)
	}
	pad := `"signed":{"x-pad":"` + strings.Repeat("A", 5*mib) + `",`
	out := map[string][2][]byte{
		"root.json of 5 MB":              {[]byte(strings.Replace(rs, `"signed":{`, pad, 1)), targets},
		"targets.json of 5 MB":           {root, []byte(strings.Replace(ts, `"signed":{`, pad, 1))},
		"arrays nested 10 000 deep":      {nested("[", "]", 10_000), targets},
		"objects nested 10 000 deep":     {root, nested(`{"a":`, "}", 10_000)},
		"nesting inside the metadata":    {[]byte(strings.Replace(rs, `"signed":{`, `"signed":{"x":`+string(nested("[", "]", 10_000))+`,`, 1)), targets},
		"duplicated top-level key":       {[]byte(strings.Replace(rs, `{"signatures":`, `{"signatures":[],"signatures":`, 1)), targets},
		"duplicated key spelled \\u0073": {[]byte(strings.Replace(rs, `{"signatures":`, `{"\u0073ignatures":[],"signatures":`, 1)), targets},
		"duplicated version":             {[]byte(strings.Replace(rs, `"version":1`, `"version":1,"version":2`, 1)), targets},
		"pretty-printed":                 {pretty.Bytes(), targets},
		"trailing newline":               {append(append([]byte(nil), root...), '\n'), targets},
		"leading space":                  {append([]byte(" "), root...), targets},
		"UTF-8 BOM":                      {append([]byte("\ufeff"), root...), targets},
		"escaped character \\u006f":      {[]byte(strings.Replace(rs, `"_type":"root"`, `"_type":"r\u006fot"`, 1)), targets},
		"escaped slash":                  {[]byte(strings.Replace(rs, `"_type":"root"`, `"_type":"ro\/ot"`, 1)), targets},
		"invalid UTF-8":                  {[]byte(strings.Replace(rs, `"_type":"root"`, "\"_type\":\"ro\xffot\"", 1)), targets},
		"trailing garbage":               {append(append([]byte(nil), root...), []byte(`{}`)...), targets},
		"number as float":                {[]byte(strings.Replace(rs, `"version":1`, `"version":1.0`, 1)), targets},
		"empty":                          {nil, targets},
		"root and targets swapped":       {targets, root},
	}
	return out
}

// TestPolicyHostile: hostile root.json and targets.json are refused by
// policy.Parse with ErrMalformed within bounded memory, and verify fails
// closed on a policy change to them, naming the entry, even though the
// change is signed by the root key.
func TestPolicyHostile(t *testing.T) {
	f := newFixture(t, 1)
	root, targets := f.policyFiles()
	if _, err := policy.Parse(root, targets); err != nil {
		t.Fatalf("the policy in force does not parse: %v", err)
	}
	for name, files := range hostilePolicies(t, root, targets) {
		t.Run(name, func(t *testing.T) {
			err := bounded(t, 64*mib, func() error { _, err := policy.Parse(files[0], files[1]); return err })
			wantErr(t, "policy.Parse", err, policy.ErrMalformed)
			pc := f.policyCommit(files[0], files[1])
			err = bounded(t, 64*mib, func() error { _, err := policy.Load(f.g, pc); return err })
			if err == nil {
				t.Errorf("policy.Load accepted it")
			}
			n, undo := f.forgePolicy(pc)
			defer undo()
			kind, subs := verify.ErrMalformed, []string{fmt.Sprintf("entry #%d", n)}
			if name == "escaped slash" {
				// "ro\/ot" reads as "ro/ot": signed content that is not
				// what the root key signed, refused for its signatures
				// before anything is decoded (\u006f reads as the signed
				// "root", and is refused as not canonical once decoded).
				kind, subs = verify.ErrThreshold, append(subs, "0 of 1 signatures", "checked before decoding it")
			}
			f.mustFail("verify", 64*mib, kind, subs...)
		})
	}
}

// TestPolicyTooManyKeys: a targets.json listing 20 000 keys (and a root
// with 20 000) is refused without building them all.
func TestPolicyTooManyKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: large hostile objects")
	}
	f := newFixture(t, 1)
	root, targets := f.policyFiles()
	var tm metadata.Metadata[metadata.TargetsType]
	if _, err := tm.FromBytes(targets); err != nil {
		t.Fatal(err)
	}
	var rm metadata.Metadata[metadata.RootType]
	if _, err := rm.FromBytes(root); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20_000; i++ {
		pub := sha256.Sum256([]byte(fmt.Sprint(i)))
		k := &metadata.Key{Type: metadata.KeyTypeEd25519, Scheme: metadata.KeySchemeEd25519, Value: metadata.KeyVal{PublicKey: hex.EncodeToString(pub[:])}}
		id, err := k.ID()
		if err != nil {
			t.Fatal(err)
		}
		tm.Signed.Delegations.Keys[id] = k
		rm.Signed.Keys[id] = k
	}
	manyTargets, err := tm.ToBytes(false)
	if err != nil {
		t.Fatal(err)
	}
	manyRoot, err := rm.ToBytes(false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("targets.json with 20 000 keys: %d bytes; root.json: %d bytes", len(manyTargets), len(manyRoot))
	for name, files := range map[string][2][]byte{"targets": {root, manyTargets}, "root": {manyRoot, targets}} {
		t.Run(name, func(t *testing.T) {
			err := bounded(t, 32*mib, func() error { _, err := policy.Parse(files[0], files[1]); return err })
			wantErr(t, "policy.Parse", err, policy.ErrMalformed)
			pc := f.policyCommit(files[0], files[1])
			n, undo := f.forgePolicy(pc)
			defer undo()
			f.mustFail("verify", 64*mib, verify.ErrMalformed, fmt.Sprintf("entry #%d", n))
		})
	}
}

// TestPolicyCommitShape: policy commits holding other files, more files,
// a subtree or a symlink are refused.
func TestPolicyCommitShape(t *testing.T) {
	f := newFixture(t, 1)
	root, targets := f.policyFiles()
	rh, _ := f.g.WriteObject("blob", root)
	th, _ := f.g.WriteObject("blob", targets)
	sub, err := f.g.WriteTree([]gitrepo.TreeEntry{{Mode: 0o100644, Name: "x", Hash: rh}})
	if err != nil {
		t.Fatal(err)
	}
	who, _ := f.r.Ident()
	cur := f.ref(policy.Ref)
	for name, entries := range map[string][]gitrepo.TreeEntry{
		"extra file":           {{Mode: 0o100644, Name: policy.RootFile, Hash: rh}, {Mode: 0o100644, Name: policy.TargetsFile, Hash: th}, {Mode: 0o100644, Name: "evil.json", Hash: th}},
		"targets as a symlink": {{Mode: 0o100644, Name: policy.RootFile, Hash: rh}, {Mode: 0o120000, Name: policy.TargetsFile, Hash: th}},
		"targets executable":   {{Mode: 0o100644, Name: policy.RootFile, Hash: rh}, {Mode: 0o100755, Name: policy.TargetsFile, Hash: th}},
		"root as a directory":  {{Mode: 0o040000, Name: policy.RootFile, Hash: sub}, {Mode: 0o100644, Name: policy.TargetsFile, Hash: th}},
		"root only":            {{Mode: 0o100644, Name: policy.RootFile, Hash: rh}},
	} {
		t.Run(name, func(t *testing.T) {
			tree, err := f.g.WriteTree(entries)
			if err != nil {
				t.Fatal(err)
			}
			pc, err := f.g.WriteObject("commit", gitrepo.EncodeCommit(tree, []gitrepo.Hash{cur}, who, who, "hostile\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = policy.Load(f.g, pc)
			wantErr(t, "policy.Load", err, policy.ErrMalformed)
			n, undo := f.forgePolicy(pc)
			defer undo()
			f.mustFail("verify", 64*mib, verify.ErrMalformed, fmt.Sprintf("entry #%d", n))
		})
	}
}
