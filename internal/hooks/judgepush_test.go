package hooks

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// countingLog counts the log entries read one by one.
type countingLog struct {
	g     *gitrepo.Repo
	reads int
}

func (c *countingLog) ReadCommit(h gitrepo.Hash) (*gitrepo.Commit, error) {
	c.reads++
	return c.g.ReadCommit(h)
}

// appendEntries writes n entries creating refs/tags/PREFIXi on top of tip
// (signed by a key no policy knows: only the reads are judged here).
func appendEntries(t *testing.T, g *gitrepo.Repo, tip gitrepo.Hash, prefix string, n int) gitrepo.Hash {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.ReadCommit(tip)
	if err != nil {
		t.Fatal(err)
	}
	e, err := rsl.FromCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	main, _, _ := g.ResolveRef("refs/heads/main")
	who := gitrepo.Ident{Name: "eve", Email: "eve@example.org", When: time.Unix(1_700_000_000, 0)}
	for i, num := 1, e.Number+1; i <= n; i, num = i+1, num+1 {
		entry := &rsl.Entry{Number: num, Type: rsl.TypeRef, Ref: fmt.Sprintf("refs/tags/%s%d", prefix, i), New: main}
		tip, err = rsl.Write(g, entry, tip, who, func(p []byte) ([]byte, error) { return sign.SignSSHSig(signer, p, sign.NamespaceGit) })
		if err != nil {
			t.Fatal(err)
		}
	}
	return tip
}

// judgePush reads each log once for all its problems (attack session 15,
// 01: one push of N entries, each creating a tag the push does not send,
// made neverPublished walk the server's whole log N times, past
// secure.maxPushSeconds), prints at most maxPrinted of them, and refuses
// once the push's time is spent.
func TestJudgePushReadsTheLogOnce(t *testing.T) {
	_, _, r := initedRepo(t)
	g := r.Git
	start, _, _ := g.ResolveRef(rsl.Ref)
	const m, n = 40, maxPrinted + 10
	oldLog := appendEntries(t, g, start, "a", m)
	newLog := appendEntries(t, g, oldLog, "e", n)
	failed := &verify.Failed{}
	for i := 1; i <= n; i++ {
		ref := fmt.Sprintf("refs/tags/e%d", i)
		failed.Problems = append(failed.Problems, &verify.Problem{Ref: ref, Kind: verify.ErrUnrecorded,
			Detail: "the log records it but the ref is missing", Hint: "restore it"})
	}
	st := &pushState{proposed: map[string]gitrepo.Hash{rsl.Ref: newLog}, onServer: map[string]bool{rsl.Ref: true},
		pushed: map[string]bool{rsl.Ref: true}, oldLog: oldLog}
	var entries int
	if err := rsl.WalkBack(g, oldLog, func(*rsl.Record) (bool, error) { entries++; return true, nil }); err != nil {
		t.Fatal(err)
	}

	var stderr bytes.Buffer
	log := &countingLog{g: g}
	c := &Context{Repo: r, Name: "pre-receive", Stderr: &stderr, logReader: log}
	err := c.judgePush(failed, st, time.Now().Add(time.Hour))
	out := stderr.String()
	if !errors.Is(err, ErrRejected) {
		t.Fatalf("judgePush: %v; want a rejection", err)
	}
	if !strings.Contains(out, "rejected: refs/tags/e1: the log this push brings records it, but the push does not send it and this server never had it") {
		t.Errorf("no refusal naming refs/tags/e1 as never published:\n%s", out)
	}
	if want := fmt.Sprintf("and %d more problem(s) of this push (the first %d are shown)", n-maxPrinted, maxPrinted); !strings.Contains(out, want) ||
		strings.Contains(out, fmt.Sprintf("refs/tags/e%d:", maxPrinted+1)) {
		t.Errorf("want the first %d problems and %q:\n%s", maxPrinted, want, out)
	}
	// One walk of each log: the server's, and the pushed one.
	if log.reads > entries+(entries+n) {
		t.Errorf("%d problems read %d entries of logs of %d and %d entries: want one walk of each", n, log.reads, entries, entries+n)
	}

	// Past the push's time, the lookups stop and the push is refused,
	// naming the setting.
	stderr.Reset()
	err = c.judgePush(failed, st, time.Now().Add(-time.Second))
	if !errors.Is(err, ErrRejected) || !strings.Contains(stderr.String(), "ran past the time the server gives one push") || !strings.Contains(stderr.String(), "secure.maxPushSeconds") {
		t.Errorf("judgePush past its deadline: %v\n%s", err, stderr.String())
	}
}
