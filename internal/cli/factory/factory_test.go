package factory_test

import (
	"path/filepath"
	"testing"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/testing/clitest"
)

// TestSetUp: the repository is opened once per run, and a repository
// without git-secure's log and policy is refused in the one wording every
// command gives, as a usage error.
func TestSetUp(t *testing.T) {
	r := clitest.New(t)
	f := r.F()
	a, err := f.Repo()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := f.Repo(); b != a {
		t.Error("Repo opened the repository twice in one run")
	}
	_, err = f.SetUp()
	if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || e.Msg != factory.NotSetUp {
		t.Fatalf("SetUp of a plain repository: %v, want the usage error %q", err, factory.NotSetUp)
	}

	r.Init()
	f = r.F()
	p, ref, err := f.SetUpRef("main")
	if err != nil || p == nil || ref != "refs/heads/main" {
		t.Fatalf("SetUpRef(main) after init = %v, %q, %v", p, ref, err)
	}
	// Only the log, no policy: still not set up.
	r.Git("update-ref", "-d", "refs/secure/policy")
	if _, err := r.F().SetUp(); err == nil || err.Error() != factory.NotSetUp {
		t.Errorf("SetUp without refs/secure/policy: %v", err)
	}
}

// TestOpenOutsideRepository: the error names the directory in one
// sentence, without git's command line.
func TestOpenOutsideRepository(t *testing.T) {
	r := clitest.New(t)
	r.Dir = filepath.Join(r.S.Home)
	_, err := r.F().Repo()
	if e, ok := report.As(err); !ok || e.Code != report.ExitUsage || e.Msg != "not in a git repository: "+r.Dir+" is not inside one (cd into a clone, or git init first)" {
		t.Errorf("Repo outside a repository: %v", err)
	}
}
