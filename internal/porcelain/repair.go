package porcelain

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

// RepairCommand is the command people are told to run when a remote serves
// a ref its log does not record (a server killed in the middle of a push).
const RepairCommand = "git secure rsl repair"

// repairLastEntries is how many of the log's newest entries a scan names
// (who pushed last: the likely author of the interrupted push).
const repairLastEntries = 3

// OutOfStep is one ref a remote serves at a value its log does not record.
type OutOfStep struct {
	Ref string `json:"ref"`
	// Recorded is the value the log records (zero: none, or deleted) and
	// Entry the entry that records it (0: none).
	Recorded gitrepo.Hash `json:"recorded"`
	Entry    uint64       `json:"entry"`
	EntryBy  string       `json:"entryBy,omitempty"`
	// Server is the remote's value (zero: the remote lacks the ref).
	Server  gitrepo.Hash `json:"server"`
	Problem string       `json:"problem"`
}

// LastEntry is one of the log's newest entries and who signed it.
type LastEntry struct {
	Number uint64 `json:"number"`
	Ref    string `json:"ref,omitempty"`
	By     string `json:"by"`
}

// RepairScan is what a remote serves that its log does not record. It
// holds the remote's state fetched into a private namespace of the clone:
// Close deletes it.
type RepairScan struct {
	Remote string       `json:"remote"`
	URL    string       `json:"url"`
	LogTip gitrepo.Hash `json:"logTip"`
	Refs   []OutOfStep  `json:"refs"`
	Last   []LastEntry  `json:"lastEntries"`

	repo   *Repo
	ns     string
	remote map[string]gitrepo.Hash
	pol    *policy.Policy
}

// RemoteURL returns the URL git-secure reaches a configured remote at (the
// "secure::" routing prefix removed); an unknown remote is a usage error.
func (r *Repo) RemoteURL(remote string) (string, error) {
	url, ok, err := r.ConfigValue("remote." + remote + ".url")
	if err != nil {
		return "", err
	}
	if !ok || url == "" {
		return "", usage("no remote named %q (git remote -v lists them)", remote)
	}
	return strings.TrimPrefix(url, "secure::"), nil
}

// ScanRemote fetches every ref of remote into a private namespace, verifies
// the remote's log as a fetch does, and returns the refs (all, or only
// those named) whose value differs from what the log records. It fails,
// repairing nothing, when the remote's state has any other problem: only a
// log that verifies entry by entry can be repaired by an entry or a push.
func (r *Repo) ScanRemote(remote string, only []string) (*RepairScan, error) {
	url, err := r.RemoteURL(remote)
	if err != nil {
		return nil, err
	}
	s := &RepairScan{Remote: remote, URL: url, repo: r, ns: fmt.Sprintf("refs/secure-repair/%d", os.Getpid())}
	ctx := context.Background()
	// A forge's refs are left out as the remote helper leaves them out,
	// unless a rule names their namespace: nothing else judges them.
	local, _, _ := r.CurrentPolicy()
	args := append(gitrepo.NoRewrite(url), "fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--no-recurse-submodules", "--", url, "+refs/*:"+s.ns+"/*")
	if _, err := r.Git.Run(ctx, nil, append(args, policy.ForgeExcludes(local)...)...); err != nil {
		s.Close()
		return nil, fmt.Errorf("repair: fetch from %s: %w", remote, err)
	}
	if err := s.load(only); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close deletes the fetched namespace (its objects stay until git gc).
func (s *RepairScan) Close() {
	s.repo.DropNamespace(s.ns, "git-secure: rsl repair done")
}

func (s *RepairScan) load(only []string) error {
	g := s.repo.Git
	remote, err := s.repo.NamespaceRefs(s.ns)
	if err != nil {
		return err
	}
	s.remote = remote
	s.LogTip = s.remote[rsl.Ref]
	if s.LogTip.IsZero() || s.remote[policy.Ref].IsZero() {
		return usage("%s has no git-secure log or policy: nothing to repair", s.Remote)
	}
	pol, err := policy.LoadSigned(g, s.remote[policy.Ref], nil)
	if err != nil {
		return fmt.Errorf("repair: %s's policy: %w", s.Remote, err)
	}
	s.pol = pol
	problems, err := s.problems(s.remote)
	if err != nil {
		return err
	}
	wanted := map[string]bool{}
	for _, ref := range only {
		wanted[ref] = true
	}
	for _, p := range problems {
		if len(wanted) > 0 && !wanted[p.Ref] {
			continue
		}
		last, err := rsl.LatestFor(g, s.LogTip, p.Ref)
		if err != nil {
			return fmt.Errorf("repair: %s: %w", p.Ref, err)
		}
		o := OutOfStep{Ref: p.Ref, Server: s.remote[p.Ref], Problem: p.Detail}
		if last != nil {
			o.Recorded, o.Entry, o.EntryBy = last.Entry.New, last.Entry.Number, s.signer(last)
		}
		s.Refs = append(s.Refs, o)
	}
	sort.Slice(s.Refs, func(i, j int) bool { return s.Refs[i].Ref < s.Refs[j].Ref })
	return rsl.WalkBack(g, s.LogTip, func(rec *rsl.Record) (bool, error) {
		s.Last = append(s.Last, LastEntry{Number: rec.Entry.Number, Ref: rec.Entry.Ref, By: s.signer(rec)})
		return len(s.Last) < repairLastEntries, nil
	})
}

// problems verifies the remote's log against values and returns the refs
// out of step with it; any other problem fails (the log itself does not
// verify, and no entry or push of a ref repairs that).
func (s *RepairScan) problems(values map[string]gitrepo.Hash) ([]*verify.Problem, error) {
	pin, threshold, err := s.repo.PinnedRoot()
	if err != nil {
		return nil, err
	}
	_, err = verify.Verify(s.repo.Git, verify.Options{Now: s.repo.Now(), RefValues: values, RootKeys: pin, RootThreshold: threshold})
	if err == nil {
		return nil, nil
	}
	var failed *verify.Failed
	if !errors.As(err, &failed) {
		return nil, fmt.Errorf("repair: verify %s: %w", s.Remote, err)
	}
	var out []*verify.Problem
	for _, p := range failed.Problems {
		if !outOfStep(p) {
			return nil, fmt.Errorf("%w: %s's log does not verify, which %s cannot repair: %v", ErrRefused, s.Remote, RepairCommand, p)
		}
		out = append(out, p)
	}
	return out, nil
}

func outOfStep(p *verify.Problem) bool {
	return p.Entry == 0 && p.Ref != "" && p.Ref != rsl.PolicyRef && errors.Is(p, verify.ErrUnrecorded)
}

// signer names who signed rec: the person the remote's policy in force
// names for the verified key, else the key's fingerprint as unverified.
func (s *RepairScan) signer(rec *rsl.Record) string {
	key, err := sign.VerifySSHSig(rec.Commit.Signature, rec.Commit.SignedPayload(), sign.NamespaceGit, s.pol.LookupKey)
	if err != nil && rec.Entry.Type == rsl.TypeRef && !rec.Entry.IsPolicy() {
		// The entry of a forge's merge, recorded by a forge app.
		if k, ferr := sign.VerifySSHSig(rec.Commit.Signature, rec.Commit.SignedPayload(), sign.NamespaceGit, s.pol.LookupForgeAppKey); ferr == nil {
			if app, ok := s.pol.ForgeAppByFingerprint(sign.Fingerprint(k)); ok {
				return "forge app " + app.Name
			}
		}
	}
	if err != nil {
		if fp, err := sign.SignatureFingerprint(rec.Commit.Signature); err == nil {
			return "key " + fp + " (not in the policy in force)"
		}
		return "unknown"
	}
	fp := sign.Fingerprint(key)
	if p, ok := s.pol.PersonByFingerprint(fp); ok {
		return p.Name
	}
	return "a root or rules key (" + fp + ")"
}

// find returns the scanned ref named ref, or a usage error.
func (s *RepairScan) find(ref string) (OutOfStep, error) {
	for _, o := range s.Refs {
		if o.Ref == ref {
			return o, nil
		}
	}
	return OutOfStep{}, usage("%s on %s is not out of step with its log: nothing to repair", ref, s.Remote)
}

// RepairResult says what a repair did on the remote.
type RepairResult struct {
	Ref      string       `json:"ref"`
	Action   string       `json:"action"` // "recorded" or "restored"
	Recorded gitrepo.Hash `json:"recorded"`
	Server   gitrepo.Hash `json:"server"`
	Entry    uint64       `json:"entry,omitempty"`
	EntryID  gitrepo.Hash `json:"entryId,omitempty"`
}

// RecordServerValue signs an entry for ref's move from its recorded value
// to the remote's value, on top of the remote's log, and pushes the log
// alone (the ref is already there). It pushes nothing unless the remote's
// state with the entry verifies for ref: the move must be one the policy
// in force lets the signer make, its approvals included. Refusals wrap
// ErrRefused and name the rule and what is missing.
func (s *RepairScan) RecordServerValue(ref, keyFile string) (*RepairResult, error) {
	o, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	r := s.repo
	signer, who, err := r.signingAs(keyFile)
	if err != nil {
		return nil, err
	}
	defer signer.Close()
	r.UseAttestations(s.remote[attest.Ref])
	move := verify.Transition{Ref: ref, Old: o.Recorded, New: o.Server, CheckPaths: true}
	p, err := r.prepareMoves(s.LogTip, s.pol, signer, who, []verify.Transition{move}, true)
	if err != nil {
		return nil, fmt.Errorf("record %s at %s: %w", ref, shortHash(o.Server), err)
	}
	if len(p.Pending) > 0 {
		return nil, fmt.Errorf("%w: record %s at %s: the move is not authorized yet: %s; nothing was signed or pushed", ErrRefused, ref, shortHash(o.Server), strings.Join(p.Pending, "; "))
	}
	e, id := p.Entries[0], p.Tip
	// What the server will judge: its refs, its log with the entry. Push
	// only when ref verifies there (the server refuses it otherwise).
	proposed := make(map[string]gitrepo.Hash, len(s.remote))
	for k, v := range s.remote {
		proposed[k] = v
	}
	proposed[rsl.Ref] = id
	problems, err := s.problems(proposed)
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		if p.Ref == ref {
			return nil, fmt.Errorf("%w: record %s at %s: the entry would not verify: %v; nothing was pushed", ErrRefused, ref, shortHash(o.Server), p)
		}
	}
	if err := s.push("--force-with-lease="+rsl.Ref+":"+s.LogTip.String(), id.String()+":"+rsl.Ref); err != nil {
		return nil, err
	}
	return &RepairResult{Ref: ref, Action: "recorded", Recorded: o.Recorded, Server: o.Server, Entry: e.Number, EntryID: id}, nil
}

// RestoreRecorded puts ref on the remote back to the value its log records
// (deletes it when the log records none), only if the remote still has it
// at the scanned value. The server's value stays in this clone's objects.
func (s *RepairScan) RestoreRecorded(ref string) (*RepairResult, error) {
	o, err := s.find(ref)
	if err != nil {
		return nil, err
	}
	src := ""
	if !o.Recorded.IsZero() {
		if ok, err := s.repo.Git.HasObject(o.Recorded); err != nil || !ok {
			return nil, fmt.Errorf("%w: restore %s: the recorded commit %s is not in this clone (fetch it, e.g. from another clone, and run again)", ErrRefused, ref, o.Recorded)
		}
		src = o.Recorded.String()
	}
	lease := "--force-with-lease=" + ref + ":"
	if !o.Server.IsZero() {
		lease += o.Server.String()
	}
	if err := s.push(lease, src+":"+ref); err != nil {
		return nil, err
	}
	return &RepairResult{Ref: ref, Action: "restored", Recorded: o.Recorded, Server: o.Server}, nil
}

// push runs one atomic push of spec to the remote's URL, with lease (a
// --force-with-lease compare-and-swap), past git-remote-secure, whose
// fetch refuses the out-of-step state.
func (s *RepairScan) push(lease, spec string) error {
	out, err := s.repo.Git.Run(context.Background(), nil, append(gitrepo.NoRewrite(s.URL), "push", "--atomic", "--porcelain", "--no-verify", lease, "--", s.URL, spec)...)
	if err != nil {
		return fmt.Errorf("%w: push to %s: %v %s", ErrRefused, s.Remote, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func shortHash(h gitrepo.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}
