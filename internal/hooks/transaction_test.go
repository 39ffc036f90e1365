package hooks

import (
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// TestRecordedAfterMatchesLatestFor: the transaction check's one walk gives,
// for every ref a log segment records or skips, what rsl.LatestFor gives for
// it, over random logs with skip annotations (including skips of entries
// older than the segment), for every segment start.
func TestRecordedAfterMatchesLatestFor(t *testing.T) {
	s := testutil.NewSandbox(t)
	dir := s.InitRepo("repo", 1)
	g, err := gitrepo.OpenWithEnv(dir, s.Environ())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	seed := sha256.Sum256([]byte("transaction test"))
	signer, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(seed[:]))
	if err != nil {
		t.Fatal(err)
	}
	signFn := func(p []byte) ([]byte, error) { return sign.SignSSHSig(signer, p, sign.NamespaceGit) }
	who := gitrepo.Ident{Name: "t", Email: "t@example.com", When: time.Unix(1_700_000_000, 0).UTC()}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 4; round++ {
		var tips []gitrepo.Hash
		type rec struct {
			n   uint64
			id  gitrepo.Hash
			ref string
		}
		var refEntries []rec
		state := map[string]gitrepo.Hash{}
		tip := gitrepo.ZeroHash
		for n := uint64(1); n <= 40; n++ {
			e := &rsl.Entry{Number: n}
			if n > 3 && rng.IntN(4) == 0 && len(refEntries) > 0 {
				// Skip the newest entry of some ref (as rsl skip does).
				r := refEntries[rng.IntN(len(refEntries))]
				e.Type, e.Skips, e.Reason = rsl.TypeAnnotation, []rsl.Skip{{Number: r.n, ID: r.id}}, "test"
			} else {
				ref := fmt.Sprintf("refs/heads/b%d", rng.IntN(5))
				var nw gitrepo.Hash
				nw[0], nw[1], nw[19] = byte(n), byte(round), 1
				e.Type, e.Ref, e.Old, e.New = rsl.TypeRef, ref, state[ref], nw
				state[ref] = nw
			}
			h, err := rsl.Write(g, e, tip, who, signFn)
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == rsl.TypeRef {
				refEntries = append(refEntries, rec{n, h, e.Ref})
			}
			tip = h
			tips = append(tips, h)
		}
		for i := 0; i+1 < len(tips); i++ {
			old, nw := tips[i], tips[len(tips)-1]
			got, err := recordedAfter(g, old, nw)
			if err != nil {
				t.Fatal(err)
			}
			// The refs the segment records or skips, the slow way.
			want := map[string]bool{}
			byNumber := map[uint64]string{}
			for _, r := range refEntries {
				byNumber[r.n] = r.ref
			}
			err = rsl.WalkBack(g, nw, func(r *rsl.Record) (bool, error) {
				if r.ID == old {
					return false, nil
				}
				if r.Entry.Type == rsl.TypeRef {
					want[r.Entry.Ref] = true
				}
				for _, sk := range r.Entry.Skips {
					want[byNumber[sk.Number]] = true
				}
				return true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("round %d, segment after #%d: refs %v, want %v", round, i+1, got, want)
			}
			for ref := range want {
				latest, err := rsl.LatestFor(g, nw, ref)
				if err != nil {
					t.Fatal(err)
				}
				exp := gitrepo.ZeroHash
				if latest != nil {
					exp = latest.Entry.New
				}
				if v, ok := got[ref]; !ok || v != exp {
					t.Fatalf("round %d, segment after #%d: %s = %v (present %v), LatestFor says %v", round, i+1, ref, v, ok, exp)
				}
			}
		}
	}
}

// TestRefStoreUpkeep: only a transaction made wholly of zero -> zero lines
// (the packed-refs part of a deletion) is git's upkeep; a deletion with its
// old value, or one such line among real ones, is judged.
func TestRefStoreUpkeep(t *testing.T) {
	x := gitrepo.Hash{1}
	zero := gitrepo.ZeroHash
	for _, c := range []struct {
		lines []RefLine
		want  bool
	}{
		{[]RefLine{{Old: zero, New: zero, Ref: "refs/heads/rel/1"}}, true},
		{[]RefLine{{Old: zero, New: zero, Ref: "refs/heads/a"}, {Old: zero, New: zero, Ref: "refs/secure/rsl"}}, true},
		{[]RefLine{{Old: x, New: zero, Ref: "refs/heads/rel/1"}}, false},
		{[]RefLine{{Old: zero, New: zero, Ref: "refs/heads/a"}, {Old: x, New: zero, Ref: "refs/heads/b"}}, false},
		{[]RefLine{{Old: zero, New: x, Ref: "refs/heads/a"}}, false},
		{nil, false},
	} {
		if got := refStoreUpkeep(c.lines); got != c.want {
			t.Errorf("refStoreUpkeep(%v) = %v, want %v", c.lines, got, c.want)
		}
	}
}
