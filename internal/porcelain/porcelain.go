// Package porcelain carries out git-secure's user-level operations (init,
// record, approve, stage/sign/apply policy changes) on one repository. It
// composes the plumbing (gitrepo, rsl, policy, attest, sign) and asks
// internal/verify whenever a decision needs trust. Every log entry for a
// ref update (rsl record, rsl repair, git-remote-secure's push) is made on
// the one recording path of prepare.go: Prepare, then Commit or a push,
// then Retry when the log moved meanwhile. Every write ends in one
// atomic compare-and-swap of the refs it moves, so a failed or concurrent
// operation leaves the repository as it was. A Repo is not safe for
// concurrent use; separate processes on one repository are.
package porcelain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/org"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/trace"
	"github.com/git-secure/git-secure/internal/verify"
)

// Repo is a repository plus the inputs git-secure takes from its
// environment, injected so that tests control them.
type Repo struct {
	Git *gitrepo.Repo
	// Now returns the current time.
	Now func() time.Time
	// AgentSocket is $SSH_AUTH_SOCK and Home is $HOME (for ~ in key paths).
	AgentSocket, Home string
	// Prompt receives what a signing program asks of the user ("touch the
	// security key"); nil discards it.
	Prompt io.Writer

	// attestTip, when attestKnown (set by a ref snapshot), saves
	// attestations() a process; zero means there are none yet.
	attestTip   gitrepo.Hash
	attestKnown bool

	cp       *verify.Checkpoint // read once by checkpoint()
	cpLoaded bool

	orgs *org.Cache // OrgCache

	// bases and latest serve new refs' base under path rules
	// (recordedTargets): the peeled and reduced recorded targets, and each
	// ref's latest recorded target in the log at latest.tip.
	bases  verify.BaseCache
	latest latestMemo

	// Trace, when set, is told when each phase of recording ends
	// (GIT_SECURE_TRACE).
	Trace *trace.Tracer

	// InitProgress, when set, is told how many of Init's entries are
	// written: (0, total) first, then every hundred and at the end.
	InitProgress func(done, total int)
}

// UseAttestations tells later operations the attestation store's tip (zero:
// no store yet) from a ref snapshot the caller already took (saves a
// process per operation).
func (r *Repo) UseAttestations(tip gitrepo.Hash) { r.attestTip, r.attestKnown = tip, true }

// attestations opens the attestation store at the snapshot's tip when one
// was taken, else at the ref's current value.
func (r *Repo) attestations() (*attest.Store, error) {
	if r.attestKnown || !r.attestTip.IsZero() {
		return attest.OpenStoreAt(r.Git, r.attestTip)
	}
	return attest.OpenStore(r.Git)
}

// ConfigValue returns one git configuration value, from the configuration
// gitrepo reads once per repository.
func (r *Repo) ConfigValue(key string) (string, bool, error) {
	return r.Git.ConfigValue(key)
}

// Preload reads the git configuration in the background, so that the
// reading overlaps the caller's next steps (hooks and the remote helper run
// on every push). It is safe to call concurrently with others.
func (r *Repo) Preload() {
	go func() { _, _ = r.Git.ConfigList() }()
}

// ErrUsage marks errors caused by the user's input or environment (exit 2).
var ErrUsage = errors.New("usage")

// ErrRefused marks a refused change: not allowed by policy, threshold not met
// (exit 1).
var ErrRefused = errors.New("refused")

func usage(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// LoadSigner loads the signing key: keyFile (--key) if given, else git's
// user.signingkey when gpg.format is ssh, else ssh-agent is not guessed.
// An OpenPGP key in gpg is named by --key openpgp:FINGERPRINT, or by
// user.signingkey when gpg.format is openpgp (keykinds.go).
func (r *Repo) LoadSigner(keyFile string) (sign.Signer, error) {
	if s, ok, err := r.loadKeylessSigner(keyFile); ok || err != nil {
		return s, err
	}
	if s, ok, err := r.loadOpenPGPSigner(keyFile); ok || err != nil {
		return s, err
	}
	spec := sign.KeySpec{File: keyFile, AgentSocket: r.AgentSocket, Home: r.Home}
	if keyFile == "" {
		format, _, err := r.ConfigValue("gpg.format")
		if err != nil {
			return nil, err
		}
		if format == "ssh" {
			spec.SigningKey, _, _ = r.ConfigValue("user.signingKey")
		}
	}
	s, err := sign.LoadSigner(spec)
	if err != nil && errors.Is(err, sign.ErrKeyUnavailable) {
		if ks, ok, kerr := r.securityKeySigner(spec); ok || kerr != nil {
			return ks, kerr
		}
	}
	if err != nil {
		if errors.Is(err, sign.ErrNoKey) {
			return nil, usage("no signing key: pass --key FILE (a private key, or a .pub whose key is in ssh-agent), or configure git: git config gpg.format ssh && git config user.signingkey ~/.ssh/id_ed25519.pub")
		}
		return nil, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return s, nil
}

// signingAs loads the signing key (LoadSigner) and who is acting (Ident),
// what every command that signs a log entry starts with. The caller
// closes the signer.
func (r *Repo) signingAs(keyFile string) (sign.Signer, gitrepo.Ident, error) {
	s, err := r.LoadSigner(keyFile)
	if err != nil {
		return nil, gitrepo.Ident{}, err
	}
	who, err := r.Ident()
	if err != nil {
		s.Close()
		return nil, gitrepo.Ident{}, err
	}
	return s, who, nil
}

// Ident returns who is acting, as git would write it in a commit (git var
// GIT_COMMITTER_IDENT honours GIT_COMMITTER_*, committer.* and user.*),
// stamped with r.Now.
func (r *Repo) Ident() (gitrepo.Ident, error) {
	// Without a process when git would take the parts as they are.
	if name, email, ok := r.Git.Committer(); ok {
		return gitrepo.Ident{Name: name, Email: email, When: r.Now().Truncate(time.Second)}, nil
	}
	out, err := r.Git.Run(context.Background(), nil, "var", "GIT_COMMITTER_IDENT")
	if err != nil {
		return gitrepo.Ident{}, usage("cannot tell who you are: set git config user.name and user.email (%v)", err)
	}
	line := strings.TrimSpace(string(out))
	lt, gt := strings.LastIndexByte(line, '<'), strings.LastIndexByte(line, '>')
	if lt < 0 || gt < lt {
		return gitrepo.Ident{}, usage("cannot parse identity %q", line)
	}
	now := r.Now()
	// Keep the user's time zone offset if git reported one.
	if f := strings.Fields(line[gt+1:]); len(f) == 2 {
		if off, err := strconv.Atoi(f[1]); err == nil {
			secs := (off/100)*3600 + (off%100)*60
			now = now.In(time.FixedZone("", secs))
		}
	}
	return gitrepo.Ident{Name: strings.TrimSpace(line[:lt]), Email: line[lt+1 : gt], When: now.Truncate(time.Second)}, nil
}

// tips reads the log tip and the policy ref in one process.
func (r *Repo) tips() (rslTip, policyTip gitrepo.Hash, err error) {
	refs, err := r.Git.ListRefs(rsl.Ref, policy.Ref)
	if err != nil {
		return gitrepo.ZeroHash, gitrepo.ZeroHash, err
	}
	for _, ref := range refs {
		switch ref.Name {
		case rsl.Ref:
			rslTip = ref.Hash
		case policy.Ref:
			policyTip = ref.Hash
		}
	}
	return rslTip, policyTip, nil
}

// CurrentPolicy loads the policy in force (refs/secure/policy).
func (r *Repo) CurrentPolicy() (*policy.Policy, gitrepo.Hash, error) {
	h, ok, err := r.Git.ResolveRef(policy.Ref)
	if err != nil {
		return nil, gitrepo.ZeroHash, err
	}
	if !ok {
		return nil, gitrepo.ZeroHash, usage("this repository is not set up for git-secure (no %s): run git secure init, or fetch refs/secure/* from the remote", policy.Ref)
	}
	// An interrupted apply leaves its entry at the log's tip with the
	// policy ref one step behind: complete it from the log, the authority.
	if fixed, ok := r.repairPolicyRef(h); ok {
		h = fixed
	}
	p, err := policy.LoadSigned(r.Git, h, nil)
	if err != nil {
		return nil, h, err
	}
	return p, h, nil
}

// repairPolicyRef moves refs/secure/policy to the policy the log's latest
// entry records when that entry changed the policy from the ref's value.
func (r *Repo) repairPolicyRef(cur gitrepo.Hash) (gitrepo.Hash, bool) {
	tip, ok, err := r.Git.ResolveRef(rsl.Ref)
	if err != nil || !ok {
		return cur, false
	}
	c, err := r.Git.ReadCommit(tip)
	if err != nil {
		return cur, false
	}
	e, err := rsl.FromCommit(c)
	if err != nil || !e.IsPolicy() || e.Old != cur || e.New == cur {
		return cur, false
	}
	if err := r.Git.UpdateRefs([]gitrepo.RefUpdate{{Name: policy.Ref, Old: cur, New: e.New}}, "git-secure: complete an interrupted policy apply"); err != nil {
		return cur, false
	}
	return e.New, true
}

func signEntry(s sign.Signer) rsl.SignFunc {
	return func(payload []byte) ([]byte, error) { return sign.SignSSHSig(s, payload, sign.NamespaceGit) }
}

func isRefChanged(err error) bool { return errors.Is(err, gitrepo.ErrRefChanged) }

func trimLines(b []byte) string { return strings.TrimSpace(string(bytes.TrimSpace(b))) }

// PinnedRoot returns the root key pin of git config: the fingerprints
// secure.rootKeys lists (space separated; nil when unset) and the number of
// them that must have signed (secure.rootThreshold; 0 when unset: all). A
// configuration that cannot be read, or a threshold that is not a number,
// is an error, never "no pin".
func (r *Repo) PinnedRoot() (keys []string, threshold int, err error) {
	v, ok, err := r.ConfigValue("secure.rootKeys")
	if err != nil {
		return nil, 0, fmt.Errorf("read the root key pin (secure.rootKeys): %w; fix the git configuration (git config --list names the bad file and line) and run the command again", err)
	}
	if ok {
		keys = strings.Fields(v)
	}
	t, ok, err := r.ConfigValue("secure.rootThreshold")
	if err != nil {
		return nil, 0, fmt.Errorf("read the root key pin (secure.rootThreshold): %w; fix the git configuration (git config --list names the bad file and line) and run the command again", err)
	}
	if ok {
		if threshold, err = strconv.Atoi(strings.TrimSpace(t)); err != nil || threshold < 1 {
			return nil, 0, fmt.Errorf("%w: git config secure.rootThreshold is %q, not a number of pinned root keys (1 or more); fix it with git config secure.rootThreshold N, or unset it to require every pinned key", ErrUsage, t)
		}
	}
	return keys, threshold, nil
}
