package freshness

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
)

// Kinds of freshness failure; test with errors.Is.
var (
	// ErrMissing: the policy sets freshness but there is no statement.
	ErrMissing = errors.New("no freshness statement")
	// ErrSignature: too few valid signatures by the policy's freshness keys.
	ErrSignature = errors.New("freshness statement not signed by enough freshness keys")
	// ErrStale: the newest statement is older than the policy allows, or
	// expired.
	ErrStale = errors.New("stale freshness statement")
	// ErrFuture: the statement is dated after the reference time (beyond
	// MaxSkew): it would stay fresh too long.
	ErrFuture = errors.New("freshness statement from the future")
	// ErrNotInLog: the statement vouches for a log tip that is not the
	// log's tip nor an earlier entry of it: the log went back (rollback).
	ErrNotInLog = errors.New("freshness statement for a log tip this log does not contain")
)

// RequireConfig is the git configuration of a clone that refuses any
// state whose policy sets no freshness (git secure clone
// --require-freshness): the policy served cannot say by itself that it
// is older than the setting.
const RequireConfig = "secure.requireFreshness"

// Required reads RequireConfig in repo (a git boolean).
func Required(repo *gitrepo.Repo) bool {
	v, ok, err := repo.ConfigValue(RequireConfig)
	if err != nil || !ok {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1":
		return true
	}
	return false
}

// MaxSkew is how far in the future a statement may be dated: clocks of a
// server and its clients differ a little.
const MaxSkew = 5 * time.Minute

// VerifySignatures checks sd's signatures against the freshness keys of
// f: at least f.Threshold distinct keys must have signed. Signatures by
// other keys are ignored; a bad signature by a freshness key fails.
func VerifySignatures(sd *Signed, pol *policy.Policy) error {
	f := pol.Freshness()
	if f == nil {
		return fmt.Errorf("%w: the policy names no freshness keys", ErrSignature)
	}
	seen := map[string]bool{}
	for _, sig := range sd.Signatures {
		key, err := sign.VerifySSHSig(sig, sd.Payload, sign.NamespaceTimestamp, pol.LookupFreshnessKey)
		if errors.Is(err, sign.ErrUnknownKey) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrSignature, err)
		}
		seen[sign.Fingerprint(key)] = true
	}
	if len(seen) < f.Threshold {
		return fmt.Errorf("%w: %d valid signature(s) by freshness keys, the policy needs %d", ErrSignature, len(seen), f.Threshold)
	}
	return nil
}

// CheckAge judges sd's times against the policy's max age at now.
func CheckAge(sd *Signed, f *policy.Freshness, now time.Time) error {
	age := now.Sub(sd.Time)
	switch {
	case sd.Time.After(now.Add(MaxSkew)):
		return fmt.Errorf("%w: dated %s, after now (%s) by more than %v", ErrFuture, stamp(sd.Time), stamp(now), MaxSkew)
	case age > f.MaxAge:
		return fmt.Errorf("%w: the newest statement was made at %s, %v ago, and the policy allows at most %v", ErrStale, stamp(sd.Time), age.Round(time.Second), f.MaxAge)
	case !now.Before(sd.Expires):
		return fmt.Errorf("%w: the newest statement (made at %s) expired at %s", ErrStale, stamp(sd.Time), stamp(sd.Expires))
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Hint is what to tell a user whose check failed.
const Hint = "in a clone, git fetch first: it brings the server's newest statement; if it stays stale, the server (or mirror) may be frozen, serving an old snapshot, or its timestamp job (git secure timestamp sign) stopped: compare with another clone or ask the administrator; to judge this state anyway (an audit of a past state) pass --no-freshness or --now TIME"

// Judge decides whether the state with log tip logTip is fresh under pol
// at now, given the statement commit stmt (zero: none). It returns nil
// when pol sets no freshness. Otherwise the statement must be signed by
// the threshold of pol's freshness keys, no older than the max age, not
// expired, not from the future, and vouch for logTip or an earlier entry
// of it: entries after the statement's are fine while the statement is
// fresh (a push the timestamp job has not signed yet).
func Judge(repo Reader, pol *policy.Policy, logTip, stmt gitrepo.Hash, now time.Time) error {
	f := pol.Freshness()
	if f == nil {
		return nil
	}
	if stmt.IsZero() {
		return fmt.Errorf("%w: the policy requires a statement of the log tip at most %v old in %s, and there is none", ErrMissing, f.MaxAge, Ref)
	}
	sd, err := Read(repo, stmt)
	if err != nil {
		return err
	}
	if err := VerifySignatures(sd, pol); err != nil {
		return err
	}
	if err := CheckAge(sd, f, now); err != nil {
		return err
	}
	if sd.Tip != logTip {
		ok, err := repo.IsAncestor(sd.Tip, logTip)
		if err != nil || !ok {
			return fmt.Errorf("%w: it vouches for log tip %s at %s, which is not this log's tip %s nor an entry before it: the log went back or was replaced", ErrNotInLog, sd.Tip, stamp(sd.Time), logTip)
		}
	}
	return nil
}
