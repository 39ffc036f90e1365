package verify

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/rsl"
)

// A root key pin (Options.RootKeys, git config secure.rootKeys) says which
// root of trust a clone accepts, as a TUF client's trusted root does. A log
// is accepted under the pin only when some root version in its chain is
// anchored by the pinned keys: valid signatures on that root version, made
// by keys it lists as root keys and that are pinned, number at least its own
// root threshold and at least the pin's threshold (Options.RootThreshold,
// by default every pinned key). A root that merely lists a pinned key but is
// signed by others does not count, and neither does a root an attacker
// holding one pinned key wrote with a lower threshold than the pin's. Every
// later root version must be signed as TUF requires (CheckPolicy: the old
// and the new root keys, each to their threshold), so the pinned keys vouch
// for everything after the anchor. A pin that anchors only a root version
// that later versions replaced is stale: the log verifies (its chain from
// the pinned root is sound, and TUF clients follow rotations the same way),
// with a warning naming the keys to pin now, because the stale pin would
// also accept, in a fresh clone, a log built with the rotated-out keys alone.

// Values of Result.Pin.
const (
	PinCurrent = "current" // the pinned keys anchor the root in force
	PinStale   = "stale"   // they anchor only a superseded root version
)

// ErrRootPin: no root version of the log is anchored by the pinned keys.
var ErrRootPin = errors.New("root of trust is not the pinned one")

// pin is the validated form of Options.RootKeys and Options.RootThreshold.
type pin struct {
	keys      []string // sorted, distinct fingerprints
	set       map[string]bool
	threshold int // signatures by pinned keys an anchoring root needs
}

// newPin checks a pin's shape: nil for no pin, an error for a threshold
// the keys cannot meet or a fingerprint that is not SSH's SHA256 form.
func newPin(keys []string, threshold int) (*pin, error) {
	if len(keys) == 0 {
		if threshold != 0 {
			return nil, fmt.Errorf("verify: a root key threshold (%d) without pinned root keys: pin the keys too (--root-key, git config secure.rootKeys)", threshold)
		}
		return nil, nil
	}
	p := &pin{set: map[string]bool{}}
	for _, k := range keys {
		if !strings.HasPrefix(k, "SHA256:") || len(k) == len("SHA256:") {
			return nil, fmt.Errorf("verify: pinned root key %q is not an SSH fingerprint (SHA256:..., as ssh-keygen -lf KEY prints it)", k)
		}
		if !p.set[k] {
			p.set[k] = true
			p.keys = append(p.keys, k)
		}
	}
	sort.Strings(p.keys)
	p.threshold = threshold
	if threshold == 0 {
		p.threshold = len(p.keys)
	}
	if p.threshold < 0 || p.threshold > len(p.keys) {
		return nil, fmt.Errorf("verify: root key threshold %d with %d pinned root key(s): it must be between 1 and %d", threshold, len(p.keys), len(p.keys))
	}
	return p, nil
}

// CheckPin returns an error when keys and threshold are not a valid root
// key pin (see Options.RootKeys); no keys and threshold 0 is "no pin".
func CheckPin(keys []string, threshold int) error {
	_, err := newPin(keys, threshold)
	return err
}

// String is the canonical form of the pin, kept in checkpoints.
func (p *pin) String() string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("%d of %s", p.threshold, strings.Join(p.keys, " "))
}

// RootPin is the canonical form of a root key pin, kept in checkpoints so
// that a checkpoint is only used under the pin it was made under ("" when
// nothing is pinned; a pin that does not parse never matches a checkpoint).
func RootPin(keys []string, threshold int) string {
	p, err := newPin(keys, threshold)
	if err != nil {
		return "invalid"
	}
	return p.String()
}

// anchorStatus says how far root p is from being anchored by the pin:
// the pinned root keys of p that validly signed it, and how many
// signatures by pinned keys it needs.
type anchorStatus struct {
	listed []string // pinned keys that p lists as root keys
	signed []string // of those, the ones whose signature on p verifies
	need   int
}

func (s anchorStatus) ok() bool { return len(s.signed) >= s.need }

func (p *pin) status(pol *policy.Policy) (anchorStatus, error) {
	st, err := roleStatus(pol, metadata.ROOT, pol.Root, nil)
	if err != nil {
		return anchorStatus{}, err
	}
	out := anchorStatus{need: max(st.Threshold, p.threshold)}
	for _, fp := range st.SignedBy {
		if p.set[fp] {
			out.listed = append(out.listed, fp)
			out.signed = append(out.signed, fp)
		}
	}
	for _, fp := range st.Missing {
		if p.set[fp] {
			out.listed = append(out.listed, fp)
		}
	}
	sort.Strings(out.listed)
	return out, nil
}

// pinState follows the pin along the log's root versions.
type pinState struct {
	pin      *pin
	anchored bool
	version  int64  // root version that anchored it (0: before the checkpoint)
	entry    uint64 // its policy entry
	lastRoot int64  // newest root version looked at
	// near lists root versions that list pinned keys without being
	// anchored by them, for the error when no version is.
	near []string
	keys map[string]bool // root keys of every version looked at
}

// observe looks at the root of a policy entry that CheckPolicy accepted.
func (s *pinState) observe(pol *policy.Policy, entry uint64) error {
	v := pol.Root.Signed.Version
	if s.anchored || v == s.lastRoot {
		return nil
	}
	s.lastRoot = v
	keys, _ := pol.RoleKeys(metadata.ROOT)
	for _, k := range keys {
		s.keys[k.Fingerprint] = true
	}
	st, err := s.pin.status(pol)
	if err != nil {
		return err
	}
	if st.ok() {
		s.anchored, s.version, s.entry = true, v, entry
		return nil
	}
	if len(st.listed) > 0 {
		s.near = append(s.near, fmt.Sprintf("root version %d (entry #%d) lists the pinned key(s) %s, but valid signatures by pinned keys on it are %d of the %d needed",
			v, entry, strings.Join(st.listed, ", "), len(st.signed), st.need))
	}
	return nil
}

// failure describes a log that no pinned root anchors.
func (s *pinState) failure() string {
	var seen []string
	for fp := range s.keys {
		seen = append(seen, fp)
	}
	sort.Strings(seen)
	msg := fmt.Sprintf("no root version of the log is signed by the pinned root keys (%s; %d signature(s) needed): its root keys were %s",
		strings.Join(s.pin.keys, ", "), s.pin.threshold, strings.Join(seen, ", "))
	if len(s.near) > 0 {
		msg += "; " + strings.Join(s.near, "; ")
	}
	return msg
}

// pinHint is the hint of an ErrRootPin problem: the log is another one, or
// the pin is wrong; never re-pin from what the log itself lists.
const pinHint = "this is not the log of the project whose root keys you pinned (a substituted log), or the pin is wrong: compare --root-key / git config secure.rootKeys with the root keys the project publishes; never pin keys because this log lists them"

// stale returns the warning for a pin that does not anchor the root in
// force, or "" when it does.
func (s *pinState) stale(final *policy.Policy, finalEntry uint64) (string, error) {
	st, err := s.pin.status(final)
	if err != nil || st.ok() {
		return "", err
	}
	keys, threshold := final.RoleKeys(metadata.ROOT)
	var fps []string
	for _, k := range keys {
		fps = append(fps, k.Fingerprint)
	}
	sort.Strings(fps)
	where := "a root version verified before the checkpoint"
	if s.version != 0 {
		where = fmt.Sprintf("root version %d (entry #%d)", s.version, s.entry)
	}
	return fmt.Sprintf("stale root key pin: the pinned keys (%s) signed %s, but the root in force is version %d (entry #%d), which they do not sign (%d of %d signatures); the log verifies through the signed rotations, but a fresh clone with this pin would also accept a log built with the old keys alone: pin the current root keys, after checking them against the ones the project publishes: %s",
		strings.Join(s.pin.keys, ", "), where, final.Root.Signed.Version, finalEntry, len(st.signed), st.need, PinCommand(fps, threshold)), nil
}

// PinCommand is the git config command that pins root keys with a
// threshold (the threshold is left out when it is every key).
func PinCommand(keys []string, threshold int) string {
	cmd := fmt.Sprintf("git config secure.rootKeys '%s'", strings.Join(keys, " "))
	if threshold != 0 && threshold != len(keys) {
		cmd += fmt.Sprintf(" && git config secure.rootThreshold %d", threshold)
	}
	return cmd
}

// checkPin records the root of trust in force in the Result and judges the
// pin against the policy timeline: false (with a problem) when no root
// version is anchored by the pinned keys.
func (v *verifier) checkPin() bool {
	final := v.finalPolicy
	keys, threshold := final.RoleKeys(metadata.ROOT)
	v.res.RootKeys = nil
	for _, k := range keys {
		v.res.RootKeys = append(v.res.RootKeys, k.Fingerprint)
	}
	sort.Strings(v.res.RootKeys)
	v.res.RootThreshold = threshold
	s := v.pin
	if s == nil {
		return true
	}
	if !s.anchored {
		v.fail(nil, rsl.PolicyRef, "", ErrRootPin, pinHint, "%s", s.failure())
		return false
	}
	msg, err := s.stale(final, v.res.PolicyEntry)
	switch {
	case err != nil:
		v.fail(nil, rsl.PolicyRef, "", ErrMalformed, "", "the root in force: %v", err)
		return false
	case msg != "":
		v.res.Pin, v.res.StalePin = PinStale, msg
		v.res.Warnings = append(v.res.Warnings, msg)
	default:
		v.res.Pin = PinCurrent
	}
	return true
}
