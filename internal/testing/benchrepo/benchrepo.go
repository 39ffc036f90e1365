// Package benchrepo builds large git-secure repositories for benchmarks,
// fast, and caches them on disk keyed by size. It is used by benchmarks
// only (internal/verify, internal/porcelain, scripts/bench.sh) and never by
// the git-secure command.
//
// A repository of N entries is a bare repository holding:
//
//   - entry 1: the first policy (refs/secure/policy). Its root and rules key
//     is alice's; the persons are alice and bob; the rules are protect-main
//     (refs/heads/main, allow alice, threshold 1) and protect-release
//     (refs/heads/release, allow alice and bob, threshold 2);
//   - entries 2..N: signed by alice, each a move of refs/heads/main to the
//     next commit of one linear source history, except every 10th entry
//     (numbers 10, 20, ...), which moves refs/heads/release there and is
//     approved by bob in refs/secure/attestations (alice's signature plus
//     bob's approval meet the threshold of 2);
//   - Options.Spare further source commits after the last recorded one
//     (reachable from refs/bench/spare), to record new entries onto.
//
// Nothing is made one process per entry: entries are encoded by internal/rsl
// (rsl.Write), policies by internal/policy (policy.Save) and approvals by
// internal/attest, signed in-process with sign.SignSSHSig and deterministic
// ed25519 keys, and written straight into one pack and its index (or as
// loose objects) without git. Git runs twice per build: git init and one git
// update-ref --stdin for the refs.
package benchrepo

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// Version is part of the cache key: bump it whenever the layout of the
// generated repositories changes.
const Version = 1

// Names of the refs, persons and rules the generated repositories use.
const (
	MainRef     = "refs/heads/main"
	ReleaseRef  = "refs/heads/release"
	SpareRef    = "refs/bench/spare"
	RuleMain    = "protect-main"
	RuleRelease = "protect-release"
	Alice       = "alice"
	Bob         = "bob"
)

// Options describe a repository to build.
type Options struct {
	// Entries is the number of RSL entries, entry 1 (the policy) included;
	// at least 2.
	Entries int
	// ReleaseEvery makes every entry whose number is a multiple of it a
	// release update with an approval (default 10).
	ReleaseEvery int
	// Spare is the number of extra source commits after the last recorded
	// one (default 1000; negative for none).
	Spare int
	// Writer is WriterPack (default) or WriterLoose.
	Writer string
	// Now is the build time (default time.Now()). Entry k is made at
	// Now-Entries+k seconds; the policy expires a year after Now.
	Now time.Time
}

// Info describes a built repository. It is stored as meta.json next to the
// repository.
type Info struct {
	Version      int            `json:"version"`
	Entries      int            `json:"entries"`
	Releases     int            `json:"releases"` // release entries, each with one approval
	Base         time.Time      `json:"base"`     // time of the policy; entry k is Base+k s
	RSL          gitrepo.Hash   `json:"rsl"`
	Policy       gitrepo.Hash   `json:"policy"`
	Attestations gitrepo.Hash   `json:"attestations"`
	Main         gitrepo.Hash   `json:"main"`
	Release      gitrepo.Hash   `json:"release"`
	Spare        []gitrepo.Hash `json:"spare"`
	Writer       string         `json:"writer"`
	Objects      int            `json:"objects"`
	Bytes        int64          `json:"bytes"`
	BuildSeconds float64        `json:"buildSeconds"`

	// Dir is the directory holding repo.git, keys/ and meta.json.
	Dir string `json:"-"`
	// Cached is true when Cached found the repository already built.
	Cached bool `json:"-"`
}

// GitDir is the bare repository.
func (i *Info) GitDir() string { return filepath.Join(i.Dir, "repo.git") }

// KeyFile is the private key file (OpenSSH format, no passphrase) of person
// (Alice or Bob); KeyFile + ".pub" is the public key.
func (i *Info) KeyFile(person string) string { return filepath.Join(i.Dir, "keys", person) }

// Now is a reference time at which the repository's policy is valid: just
// after its last entry.
func (i *Info) Now() time.Time { return i.Base.Add(time.Duration(i.Entries+60) * time.Second) }

// Key returns the deterministic ed25519 key of person: the same repository
// contents on every build with the same Options.Now.
func Key(person string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("git-secure benchrepo key/" + person))
	return ed25519.NewKeyFromSeed(seed[:])
}

// Signer returns the SSH signer of person's key.
func Signer(person string) ssh.Signer {
	s, err := ssh.NewSignerFromKey(Key(person))
	if err != nil {
		panic(err) // cannot happen for an ed25519 key
	}
	return s
}

// Env is a hermetic environment for git processes run on generated
// repositories: the caller's environment without user and system git
// configuration and without variables that select another repository.
func Env() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "LC_ALL=C", "TZ=UTC")
}

func runGit(dir string, stdin []byte, args ...string) error {
	cmd := exec.CommandContext(context.Background(), "git", args...)
	cmd.Dir = dir
	cmd.Env = Env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("benchrepo: git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// Build makes the repository described by opts in dir (which must not
// exist or be empty) and writes dir/meta.json.
func Build(dir string, opts Options) (*Info, error) {
	start := time.Now()
	if opts.Entries < 2 {
		return nil, fmt.Errorf("benchrepo: need at least 2 entries, not %d", opts.Entries)
	}
	if opts.ReleaseEvery <= 0 {
		opts.ReleaseEvery = 10
	}
	if opts.Spare == 0 {
		opts.Spare = 1000
	}
	if opts.Spare < 0 {
		opts.Spare = 0
	}
	if opts.Writer == "" {
		opts.Writer = WriterPack
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	info := &Info{Version: Version, Entries: opts.Entries, Writer: opts.Writer, Dir: dir}
	info.Base = opts.Now.UTC().Truncate(time.Second).Add(-time.Duration(opts.Entries) * time.Second)
	if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
		return nil, err
	}
	for _, person := range []string{Alice, Bob} {
		if err := writeKey(info.KeyFile(person), person); err != nil {
			return nil, err
		}
	}
	gitDir := info.GitDir()
	if err := runGit(dir, nil, "-c", "init.defaultBranch=main", "init", "-q", "--bare", gitDir); err != nil {
		return nil, err
	}
	// Identity for porcelain commands (git var GIT_COMMITTER_IDENT); no
	// automatic gc while benchmarks append entries.
	cfg, err := os.OpenFile(filepath.Join(gitDir, "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	_, err = cfg.WriteString("[user]\n\tname = Alice\n\temail = alice@example.com\n[gc]\n\tauto = 0\n")
	if err := errors.Join(err, cfg.Close()); err != nil {
		return nil, err
	}

	w, err := NewObjectWriter(opts.Writer, gitDir)
	if err != nil {
		return nil, err
	}
	refs, err := writeObjects(w, info, opts)
	if err != nil {
		return nil, err
	}
	if info.Objects, info.Bytes, err = w.Finish(); err != nil {
		return nil, err
	}
	var in bytes.Buffer
	for _, name := range []string{rsl.Ref, policy.Ref, attest.Ref, MainRef, ReleaseRef, SpareRef} {
		if h := refs[name]; !h.IsZero() {
			fmt.Fprintf(&in, "create %s %s\n", name, h)
		}
	}
	if err := runGit(gitDir, in.Bytes(), "update-ref", "--stdin"); err != nil {
		return nil, err
	}
	info.BuildSeconds = time.Since(start).Seconds()
	meta, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "meta.json"), meta, 0o644); err != nil {
		return nil, err
	}
	return info, nil
}

func writeKey(path, person string) error {
	block, err := ssh.MarshalPrivateKey(Key(person), person+"@example.com")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		return err
	}
	pub := ssh.MarshalAuthorizedKey(Signer(person).PublicKey())
	pub = append(bytes.TrimSuffix(pub, []byte("\n")), []byte(" "+person+"@example.com\n")...)
	return os.WriteFile(path+".pub", pub, 0o644)
}

// firstPolicy is the policy of entry 1: alice holds root and rules; rules
// protect main (alice, 1) and release (alice and bob, 2).
func firstPolicy(alice, bob ssh.Signer, now time.Time) (*policy.Policy, error) {
	p, err := policy.New(alice.PublicKey(), now)
	if err != nil {
		return nil, err
	}
	if err := p.AddPerson(nil, Alice, []ssh.PublicKey{alice.PublicKey()}, now); err != nil {
		return nil, err
	}
	if err := p.AddPerson(nil, Bob, []ssh.PublicKey{bob.PublicKey()}, now); err != nil {
		return nil, err
	}
	if err := p.AddRule(nil, policy.Rule{Name: RuleMain, Refs: []string{MainRef}, Allow: []string{Alice}, Threshold: 1}, now); err != nil {
		return nil, err
	}
	if err := p.AddRule(nil, policy.Rule{Name: RuleRelease, Refs: []string{ReleaseRef}, Allow: []string{Alice, Bob}, Threshold: 2}, now); err != nil {
		return nil, err
	}
	ts, err := sign.TUFSigner(alice)
	if err != nil {
		return nil, err
	}
	if err := p.SignRoot(ts); err != nil {
		return nil, err
	}
	if err := p.SignTargets(ts); err != nil {
		return nil, err
	}
	return p, nil
}

// writeObjects writes every object and returns the refs to create.
func writeObjects(w ObjectWriter, info *Info, opts Options) (map[string]gitrepo.Hash, error) {
	alice, bob := Signer(Alice), Signer(Bob)
	at := func(sec int) time.Time { return info.Base.Add(time.Duration(sec) * time.Second) }
	aliceAt := func(sec int) gitrepo.Ident {
		return gitrepo.Ident{Name: "Alice", Email: "alice@example.com", When: at(sec)}
	}
	refs := map[string]gitrepo.Hash{}

	// The policy, recorded by entry 1.
	pol, err := firstPolicy(alice, bob, info.Base)
	if err != nil {
		return nil, fmt.Errorf("benchrepo: policy: %w", err)
	}
	pc, err := policy.Save(w, pol, gitrepo.ZeroHash, aliceAt(0), "git-secure policy: root v1, rules v1")
	if err != nil {
		return nil, err
	}
	refs[policy.Ref] = pc
	info.Policy = pc

	// One linear source history: commit k changes file.txt.
	nsrc := opts.Entries - 1 + opts.Spare
	src := make([]gitrepo.Hash, nsrc+1) // src[k], k >= 1
	dev := gitrepo.Ident{Name: "Dev", Email: "dev@example.com"}
	readme, err := w.WriteObject("blob", []byte("benchmark repository made by internal/testing/benchrepo\n"))
	if err != nil {
		return nil, err
	}
	for k := 1; k <= nsrc; k++ {
		blob, err := w.WriteObject("blob", fmt.Appendf(nil, "content %d\n", k))
		if err != nil {
			return nil, err
		}
		tree, err := w.WriteTree([]gitrepo.TreeEntry{
			{Mode: gitrepo.ModeFile, Name: "README", Hash: readme},
			{Mode: gitrepo.ModeFile, Name: "file.txt", Hash: blob},
		})
		if err != nil {
			return nil, err
		}
		var parents []gitrepo.Hash
		if k > 1 {
			parents = []gitrepo.Hash{src[k-1]}
		}
		dev.When = at(k)
		if src[k], err = w.WriteObject("commit", gitrepo.EncodeCommit(tree, parents, dev, dev, fmt.Sprintf("commit %d\n", k))); err != nil {
			return nil, err
		}
	}

	// The log. Entry e (e >= 2) moves main or release to src[e-1]. Git
	// knows the empty tree of entry commits without storing it; fsck wants it.
	if _, err := w.WriteTree(nil); err != nil {
		return nil, err
	}
	signEntry := func(payload []byte) ([]byte, error) { return sign.SignSSHSig(alice, payload, sign.NamespaceGit) }
	tip, err := rsl.Write(w, &rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: rsl.PolicyRef, New: pc}, gitrepo.ZeroHash, aliceAt(1), signEntry)
	if err != nil {
		return nil, err
	}
	bobFile := attest.SignerFile(bob.PublicKey())
	var approvals []gitrepo.TreeEntry // entries of the approvals/ tree
	for e := 2; e <= opts.Entries; e++ {
		ref := MainRef
		if e%opts.ReleaseEvery == 0 {
			ref = ReleaseRef
		}
		old, new := refs[ref], src[e-1]
		if ref == ReleaseRef {
			stmt, err := attest.Approval{Ref: ref, From: old, To: new}.Statement()
			if err != nil {
				return nil, err
			}
			env, err := attest.Sign(stmt, bob)
			if err != nil {
				return nil, err
			}
			blob, err := w.WriteObject("blob", env)
			if err != nil {
				return nil, err
			}
			sub, err := w.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeFile, Name: bobFile, Hash: blob}})
			if err != nil {
				return nil, err
			}
			name := strings.TrimPrefix(attest.ApprovalDir(ref, old, new), "approvals/")
			approvals = append(approvals, gitrepo.TreeEntry{Mode: gitrepo.ModeTree, Name: name, Hash: sub})
			info.Releases++
		}
		entry := &rsl.Entry{Number: uint64(e), Type: rsl.TypeRef, Ref: ref, Old: old, New: new}
		if tip, err = rsl.Write(w, entry, tip, aliceAt(e), signEntry); err != nil {
			return nil, err
		}
		refs[ref] = new
	}
	refs[rsl.Ref] = tip
	info.RSL, info.Main, info.Release = tip, refs[MainRef], refs[ReleaseRef]

	// The attestation store: one commit holding every approval.
	if len(approvals) > 0 {
		dir, err := w.WriteTree(approvals)
		if err != nil {
			return nil, err
		}
		root, err := w.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeTree, Name: "approvals", Hash: dir}})
		if err != nil {
			return nil, err
		}
		bobID := gitrepo.Ident{Name: "Bob", Email: "bob@example.com", When: at(opts.Entries)}
		msg := fmt.Sprintf("git-secure: bob approves %d release updates\n", len(approvals))
		c, err := w.WriteObject("commit", gitrepo.EncodeCommit(root, nil, bobID, bobID, msg))
		if err != nil {
			return nil, err
		}
		refs[attest.Ref] = c
		info.Attestations = c
	}
	if opts.Spare > 0 {
		info.Spare = src[opts.Entries:]
		refs[SpareRef] = src[nsrc]
	}
	return refs, nil
}

// Load reads the Info of a repository built in dir.
func Load(dir string) (*Info, error) {
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	info := &Info{}
	if err := json.Unmarshal(b, info); err != nil {
		return nil, fmt.Errorf("benchrepo: %s/meta.json: %w", dir, err)
	}
	info.Dir = dir
	return info, nil
}

// CacheDir is where Cached keeps repositories: $GIT_SECURE_BENCH_CACHE if
// set, else .bench/ at the root of the module containing the working
// directory, else a directory under os.TempDir().
func CacheDir() string {
	if d := os.Getenv("GIT_SECURE_BENCH_CACHE"); d != "" {
		return d
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(d, ".bench")
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return filepath.Join(os.TempDir(), "git-secure-bench")
}

// maxAge is how long a cached repository is reused: its policy expires a
// year after it was built.
const maxAge = 300 * 24 * time.Hour

// CachePath is the cache directory of the repository with n entries.
func CachePath(n int) string {
	return filepath.Join(CacheDir(), fmt.Sprintf("rsl-v%d-%d", Version, n))
}

// Cached returns the cached repository with n entries (default options),
// building it first when it is missing, stale or from another Version.
// Concurrent callers may both build; one result wins.
func Cached(n int) (*Info, error) {
	final := CachePath(n)
	if info, err := Load(final); err == nil {
		if info.Version == Version && info.Entries == n && time.Since(info.Base) < maxAge {
			if _, err := os.Stat(filepath.Join(info.GitDir(), "HEAD")); err == nil {
				info.Cached = true
				return info, nil
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), filepath.Base(final)+".tmp-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := Build(tmp, Options{Entries: n}); err != nil {
		return nil, err
	}
	// Replace a stale copy; a concurrent builder's fresh copy is kept.
	if old, err := Load(final); err != nil || old.Version != Version || time.Since(old.Base) >= maxAge {
		_ = os.RemoveAll(final)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, lerr := Load(final); lerr != nil {
			return nil, err
		}
	}
	return Load(final)
}

// Copy copies the repository of info to dir (which must not exist), for a
// benchmark that writes to it, and returns the copy's Info.
func Copy(info *Info, dir string) (*Info, error) {
	src := info.Dir
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("benchrepo: copy: %s is not a regular file", path)
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, fi.Mode().Perm())
	})
	if err != nil {
		return nil, err
	}
	return Load(dir)
}
