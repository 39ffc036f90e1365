package verify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/verify"
)

// rotateRoot replaces the root key alice (root version 1 of the template)
// by bob: alice signs as the old root, bob applies as the new one.
func rotateRoot(f *ScenarioFixture) {
	f.T.Helper()
	bob, alice := f.Pub("bob"), f.FP("alice")
	f.Stage("add-root-key bob", func(p, base *policy.Policy, now time.Time) error {
		return p.AddRoleKey(base, metadata.ROOT, bob, now)
	})
	f.Stage("remove-root-key alice", func(p, base *policy.Policy, now time.Time) error {
		return p.RemoveRoleKey(base, metadata.ROOT, alice, now)
	})
	if _, err := f.R.SignStaged(f.Key("alice")); err != nil {
		f.T.Fatalf("alice signs the rotation: %v", err)
	}
	if res := f.Apply("bob"); res.RootVersion != 2 {
		f.T.Fatalf("rotation: root v%d, want v2", res.RootVersion)
	}
}

// TestRootPin: a pin is satisfied by a root version signed by the pinned
// keys themselves (their threshold, and at least that root's), followed by
// a chain of signed rotations; a root that only lists a pinned key does
// not count; a pin of a rotated-out root verifies with a stale warning.
func TestRootPin(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)
	type pinCase struct {
		name      string
		setup     func(f *ScenarioFixture)
		pin       []string // key names
		threshold int
		wantPin   string   // Result.Pin on success
		wantErr   []string // {name} stands for the fingerprint of name's key
	}
	cases := []pinCase{
		{name: "first root, its key pinned", pin: []string{"alice"}, wantPin: verify.PinCurrent},
		{name: "rotated chain, the current key pinned", setup: rotateRoot, pin: []string{"bob"}, wantPin: verify.PinCurrent},
		{name: "rotated chain, the rotated-out key pinned", setup: rotateRoot, pin: []string{"alice"}, wantPin: verify.PinStale},
		{name: "rotated chain, another key pinned", setup: rotateRoot, pin: []string{"carol"},
			wantErr: []string{"no root version of the log is signed by the pinned root keys", "its root keys were"}},
		// The old key's signature on root v2 is the rotation's, not a
		// signature by a root key of v2: both pinned, both needed, no
		// version has both.
		{name: "rotated chain, old and new pinned, both needed", setup: rotateRoot, pin: []string{"alice", "bob"},
			wantErr: []string{"no root version of the log is signed by the pinned root keys", "2 signature(s) needed"}},
		{name: "rotated chain, old and new pinned, one needed", setup: rotateRoot, pin: []string{"alice", "bob"}, threshold: 1, wantPin: verify.PinCurrent},
		// A pinned 2-of-2 root: a log whose root is alice's alone (as one
		// holder of a pinned key could write) has too few pinned signatures.
		{name: "threshold of the pin not met by a lower-threshold root", pin: []string{"alice", "bob"},
			wantErr: []string{"2 signature(s) needed", "root version 1 (entry #1) lists the pinned key(s) {alice}, but valid signatures by pinned keys on it are 1 of the 2 needed"}},
		// alice lists carol as a root key without carol signing anything.
		{name: "root lists the pinned key, signed by others", setup: func(f *ScenarioFixture) {
			carol := f.Pub("carol")
			f.Stage("add-root-key carol", func(p, base *policy.Policy, now time.Time) error {
				return p.AddRoleKey(base, metadata.ROOT, carol, now)
			})
			f.Apply("alice")
		}, pin: []string{"carol"},
			wantErr: []string{"root version 2 (entry #", "lists the pinned key(s) {carol}, but valid signatures by pinned keys on it are 0 of the 1 needed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := tmpl.Clone(t)
			if tc.setup != nil {
				tc.setup(f)
			}
			var pin []string
			for _, name := range tc.pin {
				pin = append(pin, f.FP(name))
			}
			opts := verify.Options{RootKeys: pin, RootThreshold: tc.threshold}
			if tc.wantErr != nil {
				var want []string
				for _, w := range tc.wantErr {
					for _, name := range scenarioKeys {
						w = strings.ReplaceAll(w, "{"+name+"}", f.FP(name))
					}
					want = append(want, w)
				}
				f.MustFail(opts, verify.ErrRootPin, want...)
				return
			}
			res := f.MustVerify(opts)
			if res.Pin != tc.wantPin {
				t.Fatalf("Pin = %q, want %q (warnings %q)", res.Pin, tc.wantPin, res.Warnings)
			}
			if tc.wantPin == verify.PinStale {
				want := "git config secure.rootKeys '" + f.FP("bob") + "'"
				if !strings.Contains(res.StalePin, "stale root key pin") || !strings.Contains(res.StalePin, want) || !strings.Contains(res.StalePin, "root version 1 (entry #1)") {
					t.Fatalf("stale pin warning %q: want it to name the superseded root and %q", res.StalePin, want)
				}
				if !containsString(res.Warnings, res.StalePin) {
					t.Fatalf("the stale pin warning is not among the warnings %q", res.Warnings)
				}
			} else if res.StalePin != "" {
				t.Fatalf("unexpected stale pin warning %q", res.StalePin)
			}
		})
	}
}

// TestRootPinCheckpoint: a checkpoint is only reused under the pin it was
// made under, and a stale pin is still reported when verification starts
// from a checkpoint.
func TestRootPinCheckpoint(t *testing.T) {
	t.Parallel()
	tmpl := NewScenarioTemplate(t)
	f := tmpl.Clone(t)
	rotateRoot(f)
	stale := verify.Options{RootKeys: []string{f.FP("alice")}}
	res := f.MustVerify(stale)
	if res.Checkpoint == nil || res.Checkpoint.RootPin != verify.RootPin(stale.RootKeys, 0) {
		t.Fatalf("checkpoint %+v: want one made under the pin", res.Checkpoint)
	}
	stale.Checkpoint = res.Checkpoint
	again := f.MustVerify(stale)
	if again.Checked != 0 || again.Pin != verify.PinStale || !strings.Contains(again.StalePin, "before the checkpoint") {
		t.Fatalf("from the checkpoint: checked %d, pin %q, warning %q; want 0 checked and the stale pin reported", again.Checked, again.Pin, again.StalePin)
	}
	// Under another pin the checkpoint proves nothing: everything is
	// checked, and carol's pin fails.
	other := verify.Options{RootKeys: []string{f.FP("carol")}, Checkpoint: res.Checkpoint}
	f.MustFail(other, verify.ErrRootPin, "no root version of the log is signed by the pinned root keys")
}

// TestRootPinShape: pins that cannot be met are errors before any check.
func TestRootPinShape(t *testing.T) {
	for _, tc := range []struct {
		keys      []string
		threshold int
		want      string
	}{
		{nil, 1, "without pinned root keys"},
		{[]string{"SHA256:a"}, 2, "threshold 2 with 1 pinned root key(s)"},
		{[]string{"SHA256:a", "SHA256:a"}, 2, "threshold 2 with 1 pinned root key(s)"}, // one key counts once
		{[]string{"ssh-ed25519 AAAA"}, 0, "is not an SSH fingerprint"},
		{[]string{"SHA256:a"}, -1, "threshold -1"},
	} {
		err := verify.CheckPin(tc.keys, tc.threshold)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckPin(%q, %d) = %v, want an error containing %q", tc.keys, tc.threshold, err, tc.want)
		}
	}
	if err := verify.CheckPin(nil, 0); err != nil {
		t.Errorf("no pin: %v", err)
	}
	if a, b := verify.RootPin([]string{"SHA256:b", "SHA256:a"}, 0), verify.RootPin([]string{"SHA256:a", "SHA256:b"}, 2); a != b {
		t.Errorf("RootPin is not canonical: %q vs %q", a, b)
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
