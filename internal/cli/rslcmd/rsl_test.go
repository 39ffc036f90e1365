package rslcmd

import (
	"context"
	"testing"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestRunRecordSkipLog: record, skip and log through their run functions,
// and the one "not set up" wording of record and skip.
func TestRunRecordSkipLog(t *testing.T) {
	r := clitest.New(t)
	ctx := context.Background()
	for name, run := range map[string]func() error{
		"record": func() error { return runRecord(ctx, &RecordOptions{F: r.F(), Ref: "main", Key: r.Priv("alice")}) },
		"skip": func() error {
			return runSkip(ctx, &SkipOptions{F: r.F(), Entries: []string{"#2"}, Reason: "r", Key: r.Priv("alice")})
		},
	} {
		if e, ok := report.As(run()); !ok || e.Code != report.ExitUsage || e.Msg != factory.NotSetUp {
			t.Errorf("%s before init: %v, want %q", name, e, factory.NotSetUp)
		}
	}

	r.Init()
	r.S.Commit(r.Dir, "a.txt", "a", "second")
	if err := runRecord(ctx, &RecordOptions{F: r.F(), Ref: "main", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "record output", r.Stdout.String(), "recorded entry #3: refs/heads/main ")
	if err := runRecord(ctx, &RecordOptions{F: r.F(), Ref: "main", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "second record", r.Stdout.String(), "refs/heads/main is already recorded at", "(entry #3)")

	if err := runSkip(ctx, &SkipOptions{F: r.F(), Entries: []string{"x"}, Reason: "r"}); err == nil || err.Error() != `"x" is not an entry number` {
		t.Errorf("skip x: %v", err)
	}
	if err := runSkip(ctx, &SkipOptions{F: r.F(), Entries: []string{"#3"}, Reason: "pushed by mistake", Key: r.Priv("alice")}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "skip output", r.Stdout.String(), "recorded annotation #4", "refs/heads/main is now recorded at")

	if err := runLog(ctx, &LogOptions{F: r.F(), MaxCount: 2}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "log", r.Stdout.String(), "#4 ", "reason: pushed by mistake", "#3 ", "by the root and rules key ("+r.FP("alice")+"), no person's")
	// Once the init key is a person's, the entries it signed before say
	// whose it is (a stranger read "by a root or rules key").
	if err := runLog(ctx, &LogOptions{F: r.F(), JSON: true}); err != nil {
		t.Fatal(err)
	}
	clitest.Contains(t, "log --json", r.Stdout.String(), `"keyRole": "root and rules"`)
}
