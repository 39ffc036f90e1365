package policy

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// saveFiles writes root, targets and the rule files as a policy commit.
func saveFiles(t testing.TB, repo *memRepo, root, targets []byte, rules map[string][]byte) gitrepo.Hash {
	t.Helper()
	rh, err := repo.WriteObject("blob", root)
	must(t, err)
	th, err := repo.WriteObject("blob", targets)
	must(t, err)
	entries := []gitrepo.TreeEntry{{Mode: 0o100644, Name: RootFile, Hash: rh}, {Mode: 0o100644, Name: TargetsFile, Hash: th}}
	if len(rules) > 0 {
		var sub []gitrepo.TreeEntry
		for name, data := range rules {
			bh, err := repo.WriteObject("blob", data)
			must(t, err)
			sub = append(sub, gitrepo.TreeEntry{Mode: 0o100644, Name: name + ".json", Hash: bh})
		}
		sh, err := repo.WriteTree(sub)
		must(t, err)
		entries = append(entries, gitrepo.TreeEntry{Mode: 0o040000, Name: RulesDir, Hash: sh})
	}
	tree, err := repo.WriteTree(entries)
	must(t, err)
	h, err := repo.WriteObject("commit", gitrepo.EncodeCommit(tree, nil, testWho, testWho, "staged\n"))
	must(t, err)
	return h
}

// stagedHostile returns hostile staged changes of f's policy, each with
// the reason CheckStaged (and so Load, before decoding) refuses it.
func stagedHostile(t testing.TB, f *fixture) map[string]struct {
	root, targets []byte
	want          string
} {
	r, tg := encode(t, f.p)
	deep := []byte(`{"signatures":[],"signed":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`)
	return map[string]struct {
		root, targets []byte
		want          string
	}{
		"targets of small values": {r, hostileTargetsWithin(t, tg, "0"), "targets.json: signed._type must be \"targets\""},
		"root of small values":    {hostileWithin(t, r, "[]", MaxFileSize), tg, "root.json: signed._type must be \"root\""},
		"too deep":                {r, deep, "targets.json: invalid JSON: nested deeper than 32"},
		"too large":               {r, append(tg, make([]byte, MaxTargetsSize)...), "too large"},
		"not canonical":           {r, replaceOnce(t, replaceOnce(t, tg, `"version":1,`, ``), `"signed":{`, `"signed":{"version":1,`), "targets.json is not in canonical form"},
		"extra member":            {r, []byte(`{"signatures":[],"signed":{"_type":"targets"},"x":1}`), "targets.json must hold exactly signed and signatures"},
		"root as targets":         {r, r, "targets.json: signed._type must be \"targets\""},
	}
}

// TestCheckStagedHostile checks that hostile staged changes are refused
// by CheckStaged and by Load for the reason CheckStaged gives, before
// go-tuf decodes them (BenchmarkCheckStagedHostile measures the cost),
// and that an honest staged change passes.
func TestCheckStagedHostile(t *testing.T) {
	f := newFixture(t)
	repo := &memRepo{}
	r, tg := encode(t, f.p)
	if err := CheckStaged(repo, saveFiles(t, repo, r, tg, nil)); err != nil {
		t.Fatalf("an honest staged change: %v", err)
	}
	for name, c := range stagedHostile(t, f) {
		t.Run(name, func(t *testing.T) {
			h := saveFiles(t, repo, c.root, c.targets, nil)
			err := CheckStaged(repo, h)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("CheckStaged = %v, want %q", err, c.want)
			}
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, gitrepo.ErrTooLarge) {
				t.Fatalf("CheckStaged = %v, wraps neither ErrMalformed nor gitrepo.ErrTooLarge", err)
			}
			if _, lerr := Load(repo, h); lerr == nil || !strings.Contains(lerr.Error(), c.want) {
				t.Fatalf("Load = %v, want %q", lerr, c.want)
			}
		})
	}
	// A rule file that is not a metadata file is refused as such.
	d := newDeleg(t)
	dr, dtg := encode(t, d.p)
	files, err := d.p.EncodeRuleFiles()
	must(t, err)
	files["crypto"] = []byte(`{"signatures":[],"signed":{"_type":"root"}}`)
	err = CheckStaged(repo, saveFiles(t, repo, dr, dtg, files))
	if want := "rules/crypto.json: signed._type must be \"targets\""; !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want) {
		t.Fatalf("CheckStaged(a rule file of type root) = %v, want %q", err, want)
	}
}

// BenchmarkCheckStagedHostile: what Load spent on a hostile staged
// change before CheckStaged ran first (decode/: ParseFiles) and what it
// spends now (Load).
func BenchmarkCheckStagedHostile(b *testing.B) {
	f := newFixture(b)
	repo := &memRepo{}
	for name, c := range stagedHostile(b, f) {
		if name != "targets of small values" && name != "root of small values" {
			continue
		}
		h := saveFiles(b, repo, c.root, c.targets, nil)
		b.Run("decode/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseFiles(c.root, c.targets, nil); err == nil {
					b.Fatal("parsed")
				}
			}
		})
		b.Run("load/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Load(repo, h); err == nil {
					b.Fatal("loaded")
				}
			}
		})
	}
}
