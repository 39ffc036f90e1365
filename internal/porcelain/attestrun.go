package porcelain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
)

// RunResult says what AttestRun did.
type RunResult struct {
	Tree       gitrepo.Hash `json:"tree"`
	Commit     gitrepo.Hash `json:"commit"`
	ExitCode   int          `json:"exitCode"`
	DurationMs int64        `json:"durationMs"`
	Attested   bool         `json:"attested"`
	Person     string       `json:"person,omitempty"`
}

// ErrTestsFailed is returned when the command exits non-zero.
var ErrTestsFailed = errors.New("the command failed; nothing was attested")

// AttestRun runs argv in the clean work tree of HEAD and, when it exits 0
// and left the tree as it was, records a signed test-run attestation of
// HEAD's tree: the command, exit status, duration and tool versions.
// Version is git-secure's own version, recorded with the tools.
func (r *Repo) AttestRun(argv []string, keyFile, version string, stdout, stderr io.Writer) (*RunResult, error) {
	if len(argv) == 0 {
		return nil, usage("give the test command after --, e.g. git secure attest run -- make test")
	}
	wt := r.Git.WorkTree()
	if wt == "" {
		return nil, usage("attest run needs a work tree (this repository is bare)")
	}
	head, tree, err := r.cleanHead()
	if err != nil {
		return nil, err
	}
	s, person, err := r.personSigner(keyFile, "a test attestation")
	if err != nil {
		return nil, err
	}
	defer s.Close()
	started := r.Now()
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	cmd.Dir = wt
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	res := &RunResult{Tree: tree, Commit: head, DurationMs: time.Since(started).Milliseconds()}
	if runErr != nil {
		var ee *exec.ExitError
		if !errors.As(runErr, &ee) {
			return nil, usage("cannot run %s: %v", argv[0], runErr)
		}
		res.ExitCode = ee.ExitCode()
		return res, fmt.Errorf("%w: %w (exit %d)", ErrRefused, ErrTestsFailed, res.ExitCode)
	}
	// The command must have tested exactly that tree, and left it so.
	head2, tree2, err := r.cleanHead()
	if err != nil || head2 != head || tree2 != tree {
		return res, fmt.Errorf("%w: the command changed the work tree or HEAD while it ran, so what it tested is not the committed tree; nothing was attested", ErrRefused)
	}
	run := attest.TestRun{Tree: tree, Commit: head, Command: argv, ExitCode: 0, DurationMs: res.DurationMs,
		Tools: r.toolVersions(version), StartedAt: started.UTC()}
	stmt, err := run.Statement()
	if err != nil {
		return nil, err
	}
	if _, _, err := r.storeAttestation(stmt, s, attest.TestRunDir(tree),
		fmt.Sprintf("git-secure: %s attests a passing test run on tree %s", person.Name, tree.String()[:12])); err != nil {
		return nil, err
	}
	res.Attested, res.Person = true, person.Name
	return res, nil
}

// cleanHead returns HEAD and its tree, refusing a work tree with changes
// (untracked files included: they could change what the tests see).
func (r *Repo) cleanHead() (gitrepo.Hash, gitrepo.Hash, error) {
	out, err := r.Git.Run(context.Background(), nil, "status", "--porcelain", "--untracked-files=normal")
	if err != nil {
		return gitrepo.ZeroHash, gitrepo.ZeroHash, err
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		return gitrepo.ZeroHash, gitrepo.ZeroHash, usage("the work tree has changes, so the tests would not run on the committed tree; commit or stash them first:\n%s", s)
	}
	head, err := r.Git.ResolveRevision("HEAD")
	if err != nil {
		return gitrepo.ZeroHash, gitrepo.ZeroHash, usage("no commit checked out: %v", err)
	}
	c, err := r.Git.ReadCommit(head)
	if err != nil {
		return gitrepo.ZeroHash, gitrepo.ZeroHash, err
	}
	return head, c.Tree, nil
}

// toolVersions records what ran the tests.
func (r *Repo) toolVersions(version string) map[string]string {
	tools := map[string]string{"git-secure": version, "os": runtime.GOOS + "/" + runtime.GOARCH}
	if out, err := r.Git.Run(context.Background(), nil, "version"); err == nil {
		tools["git"] = strings.TrimSpace(strings.TrimPrefix(string(out), "git version "))
	}
	if p, err := exec.LookPath("go"); err == nil {
		if out, err := exec.Command(p, "env", "GOVERSION").Output(); err == nil {
			tools["go"] = strings.TrimSpace(string(out))
		}
	}
	if h, err := os.Hostname(); err == nil {
		tools["host"] = h
	}
	return tools
}
