package gitrepo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// EnvInternal is set for every git process git-secure starts, so that its
// own hooks in them (the reference-transaction guard of refs/secure/*,
// pre-push) know the change is git-secure's. A server never trusts it: its
// pre-receive hook verifies every push whatever the environment says.
const EnvInternal = "GIT_SECURE_INTERNAL"

// EnvNoFastPath, set to anything but "" or "0" in the environment a Repo
// is opened with, sends every read and write through git itself: none of
// the in-process readers of package fastpath (loose and packed objects,
// refs and packed-refs, configuration files, trees, the layout check of
// OpenGitDir), no in-process object writes, no in-process ancestry walk.
// It is read once, when the Repo is opened.
const EnvNoFastPath = fastpath.EnvOff

// EnvNoInProcess is EnvNoFastPath's first name, still honoured.
const EnvNoInProcess = fastpath.EnvOffOld

// maxStderr bounds how much stderr of a git process is kept.
const maxStderr = 64 << 10

// Repo is one repository. It is safe for concurrent use.
type Repo struct {
	gitDir   string
	workTree string
	env      []string
	dir      string // working directory for child processes
	// commonDir holds what linked work trees share (objects, refs, info,
	// shallow): the git directory itself unless this is a linked work tree.
	commonDir string

	// fast is the in-process readers, nil when EnvNoFastPath was set
	// when the Repo was opened: then everything comes from git.
	fast *fastpath.Repo

	batch      catFile // git cat-file --batch
	batchCheck catFile // git cat-file --batch-check

	// trees keeps the trees ChangedPaths read for the next diffs.
	trees treeCache

	// The configuration, read once (ConfigList); SetConfig and
	// UnsetConfig drop it.
	cfgMu   sync.Mutex
	cfg     []ConfigEntry
	cfgRead bool

	closeMu sync.Mutex
	closed  bool
}

// ErrNotRepository is wrapped by Open when dir is not inside a git
// repository.
var ErrNotRepository = errors.New("not a git repository")

// ErrObjectFormat is wrapped by Open for a repository whose object format
// is not SHA-1 (a SHA-256 repository): git-secure's formats name objects
// by SHA-1.
var ErrObjectFormat = errors.New("only SHA-1 repositories are supported")

// GitError is returned when a git process exits unsuccessfully.
type GitError struct {
	Args     []string
	ExitCode int // -1 if the process did not exit normally
	Stderr   string
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		// Keep the first line plus the last one (usually the fatal line).
		last := msg[strings.LastIndexByte(msg, '\n')+1:]
		msg = msg[:i] + " ... " + last
	}
	msg = truncate(msg, 300)
	args := truncate(strings.Join(redactArgs(e.Args), " "), 200)
	if msg == "" {
		return fmt.Sprintf("gitrepo: git %s: exit status %d", args, e.ExitCode)
	}
	return fmt.Sprintf("gitrepo: git %s: exit status %d: %s", args, e.ExitCode, msg)
}

// redactArgs hides URL credentials ("scheme://user:secret@host").
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if j := strings.Index(a, "://"); j >= 0 {
			rest := a[j+3:]
			if at := strings.IndexByte(rest, '@'); at >= 0 && !strings.ContainsAny(rest[:at], "/") {
				a = a[:j+3] + "***" + rest[at:]
			}
		}
		out[i] = a
	}
	return out
}

// envStrip lists inherited variables that would override the repository
// chosen by the dir argument of Open.
var envStrip = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE",
	"GIT_PREFIX", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES",
	"GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE",
}

func filterEnv(env []string) []string {
	out := make([]string, 0, len(env)+4)
outer:
	for _, kv := range env {
		for _, k := range envStrip {
			if strings.HasPrefix(kv, k+"=") {
				continue outer
			}
		}
		out = append(out, kv)
	}
	return out
}

// Open opens the repository containing dir, which may be inside a work
// tree, a bare repository or a .git directory. It uses os.Environ() for git
// child processes.
func Open(dir string) (*Repo, error) { return OpenWithEnv(dir, os.Environ()) }

// OpenWithEnv is Open with an explicit environment for git child processes.
// GIT_DIR, GIT_WORK_TREE and similar variables in env are ignored: dir
// alone selects the repository.
func OpenWithEnv(dir string, env []string) (*Repo, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, wrapf(err, "open %s", dir)
	}
	base := filterEnv(env)
	if gitDir, workTree, ok := discover(abs, base); ok {
		return assemble(gitDir, workTree, gitDir, base, fastpath.FilesRefStore(gitDir)), nil
	}
	args := []string{"rev-parse", "--absolute-git-dir", "--is-bare-repository", "--is-inside-git-dir", "--show-object-format", "--git-common-dir"}
	// The common case, inside a work tree, in one process; --show-toplevel
	// fails in a bare repository or inside .git, which the slower path
	// below handles.
	fastTop := ""
	var out []byte
	err = errors.New("a git directory: no work tree to ask for")
	if !fastpath.LooksLikeGitDir(abs) {
		out, err = runGit(context.Background(), base, abs, nil, append(args, "--show-toplevel")...)
	}
	if err == nil {
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) == 6 && lines[1] == "false" && lines[2] == "false" && filepath.IsAbs(lines[5]) {
			fastTop = lines[5]
			out = []byte(strings.Join(lines[:5], "\n") + "\n")
		} else {
			err = errors.New("slow path")
		}
	}
	if err != nil {
		out, err = runGit(context.Background(), base, abs, nil, args...)
	}
	if err != nil {
		var ge *GitError
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository") {
			return nil, fmt.Errorf("gitrepo: open %s: %w", dir, ErrNotRepository)
		}
		return nil, wrapf(err, "open %s", dir)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 5 {
		return nil, fmt.Errorf("gitrepo: open %s: unexpected rev-parse output %q", dir, truncate(string(out), 200))
	}
	gitDir, bare, inGitDir, format, common := lines[0], lines[1] == "true", lines[2] == "true", lines[3], lines[4]
	if !filepath.IsAbs(common) {
		common = filepath.Join(abs, common)
	}
	if format != "sha1" {
		return nil, fmt.Errorf("gitrepo: open %s: object format %q: %w", dir, format, ErrObjectFormat)
	}
	if !filepath.IsAbs(gitDir) {
		return nil, fmt.Errorf("gitrepo: open %s: git dir %q is not absolute", dir, gitDir)
	}
	workTree := fastTop
	if !bare && workTree == "" {
		probe := abs
		if inGitDir {
			// Inside the .git directory of a non-bare repository: the
			// work tree is normally its parent; confirm with git.
			probe = filepath.Dir(gitDir)
			o, err := runGit(context.Background(), base, probe, nil, "rev-parse", "--absolute-git-dir")
			if err != nil || strings.TrimSpace(string(o)) != gitDir {
				probe = ""
			}
		}
		if probe != "" {
			o, err := runGit(context.Background(), base, probe, nil, "rev-parse", "--show-toplevel")
			if err != nil {
				if !inGitDir {
					return nil, wrapf(err, "open %s", dir)
				}
			} else {
				workTree = strings.TrimRight(string(o), "\n")
			}
		}
	}
	return assemble(gitDir, workTree, common, base, fastpath.FilesRefStore(gitDir)), nil
}

// assemble makes a Repo for a repository already located: git child
// processes get GIT_DIR (and GIT_WORK_TREE) explicitly, and the
// in-process readers are opened unless base turns them off.
func assemble(gitDir, workTree, commonDir string, base []string, filesRefs bool) *Repo {
	r := &Repo{gitDir: gitDir, workTree: workTree, commonDir: commonDir}
	r.fast = fastpath.Open(fastpath.Options{
		GitDir: gitDir, CommonDir: commonDir, Env: base, FilesRefs: filesRefs, ValidRefName: ValidRefName,
	})
	r.env = append(base, "GIT_DIR="+gitDir, "GIT_NO_REPLACE_OBJECTS=1", EnvInternal+"=1")
	if workTree != "" {
		r.env = append(r.env, "GIT_WORK_TREE="+workTree)
		r.dir = workTree
	} else {
		r.dir = gitDir
	}
	r.batch = catFile{repo: r, mode: "--batch"}
	r.batchCheck = catFile{repo: r, mode: "--batch-check"}
	return r
}

// GitDir is the absolute path of the git directory.
func (r *Repo) GitDir() string { return r.gitDir }

// WorkTree is the absolute path of the work tree, or "" for a bare
// repository.
func (r *Repo) WorkTree() string { return r.workTree }

// Env returns a copy of the environment used for git child processes.
func (r *Repo) Env() []string { return append([]string(nil), r.env...) }

// Close stops the long-lived helper processes. The Repo is unusable
// afterwards.
func (r *Repo) Close() error {
	r.closeMu.Lock()
	r.closed = true
	r.closeMu.Unlock()
	err1 := r.batch.close()
	err2 := r.batchCheck.close()
	r.fast.Close()
	return errors.Join(err1, err2)
}

func (r *Repo) isClosed() bool {
	r.closeMu.Lock()
	defer r.closeMu.Unlock()
	return r.closed
}

var errClosed = errors.New("gitrepo: repository is closed")

// Run runs git with args in the repository and returns its stdout. On
// failure the error is a *GitError. Arguments are passed as given: callers
// must not pass unvalidated input (use --end-of-options where git supports
// it).
func (r *Repo) Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	if r.isClosed() {
		return nil, errClosed
	}
	return runGit(ctx, r.env, r.dir, stdin, args...)
}

// run is Run for internal use with a background context.
func (r *Repo) run(stdin []byte, args ...string) ([]byte, error) {
	return r.Run(context.Background(), stdin, args...)
}

func runGit(ctx context.Context, env []string, dir string, stdin []byte, args ...string) ([]byte, error) {
	return runGitTee(ctx, env, dir, stdin, nil, args...)
}

// runGitTee is runGit that also copies git's stderr to tee as it comes,
// when tee is not nil.
func runGitTee(ctx context.Context, env []string, dir string, stdin []byte, tee io.Writer, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout bytes.Buffer
	stderr := &limitedBuffer{max: maxStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if tee != nil {
		cmd.Stderr = io.MultiWriter(stderr, tee)
	}
	err := cmd.Run()
	if err != nil {
		ge := gitError(args, stderr, err)
		if ctx.Err() != nil {
			return stdout.Bytes(), fmt.Errorf("%w (%w)", ge, ctx.Err())
		}
		return stdout.Bytes(), ge
	}
	return stdout.Bytes(), nil
}

// gitError describes the failure err of a git run with args: its exit
// code and stderr, or err itself when git did not run to an exit.
func gitError(args []string, stderr *limitedBuffer, err error) *GitError {
	ge := &GitError{Args: append([]string(nil), args...), ExitCode: -1, Stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ge.ExitCode = ee.ExitCode()
	} else {
		ge.Stderr = err.Error()
	}
	return ge
}

// exitCode returns the exit code of a *GitError in err, or -1.
func exitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// limitedBuffer keeps at most max bytes and discards the rest.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		if len(p) > room {
			b.buf.Write(p[:room])
		} else {
			b.buf.Write(p)
		}
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// envValue is the last value of key in env, "" when unset.
func envValue(env []string, key string) string {
	v, _ := fastpath.LookupEnv(env, key)
	return v
}

// NoRewrite returns git options that keep url from being rewritten to
// "secure::<url>" again (git secure hooks install sets an empty
// url.secure::.insteadOf prefix): the longest insteadOf prefix wins, and a
// prefix of url that rewrites to itself is longer than the empty one. The
// prefix stops before any "=", which git -c would take for the end of the
// key.
func NoRewrite(url string) []string {
	p, _, _ := strings.Cut(url, "=")
	if p == "" {
		return nil
	}
	return []string{"-c", "url." + p + ".insteadOf=" + p, "-c", "url." + p + ".pushInsteadOf=" + p}
}
