package keyless_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/keyless"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
	"google.golang.org/protobuf/proto"
)

// FuzzVerify: any armored input fails with ErrBadSignature or verifies as
// the one valid signature it was made from.
func FuzzVerify(f *testing.F) {
	s := keylesstest.New(f)
	trust := s.Trust(f)
	id := keyless.Identity{Issuer: google, Subject: alice}
	valid := s.Sign(f, keylesstest.Request{Cert: keylesstest.Cert{Identity: id}, Namespace: ns, Data: data}).Armor(f)
	_, real := realCommit(f)
	f.Add(valid)
	f.Add(real)
	f.Add([]byte("-----BEGIN SIGNED MESSAGE-----\nMAA=\n-----END SIGNED MESSAGE-----\n"))
	f.Fuzz(func(t *testing.T, armored []byte) {
		v, err := keyless.VerifyAs(armored, data, ns, trust, id)
		if err != nil {
			if !errors.Is(err, keyless.ErrBadSignature) {
				t.Fatalf("error without ErrBadSignature: %v", err)
			}
			return
		}
		if v.Identity != id {
			t.Fatalf("verified as %v", v.Identity)
		}
	})
}

// FuzzParseDER: the CMS parser never panics and fails closed.
func FuzzParseDER(f *testing.F) {
	s := keylesstest.New(f)
	sig := s.Sign(f, keylesstest.Request{Cert: keylesstest.Cert{Identity: keyless.Identity{Issuer: google, Subject: alice}}, Namespace: ns, Data: data})
	der, err := sig.DER()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(der)
	_, real := realCommit(f)
	realDER, err := keyless.Unarmor(real)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(realDER)
	f.Fuzz(func(t *testing.T, der []byte) {
		if err := keyless.ParseForFuzz(der); err != nil && !errors.Is(err, keyless.ErrBadSignature) {
			t.Fatalf("error without ErrBadSignature: %v", err)
		}
	})
}

// FuzzRekorEntry: an altered log entry never verifies in place of the
// real one (only a re-encoding of the same fields could).
func FuzzRekorEntry(f *testing.F) {
	s := keylesstest.New(f)
	trust := s.Trust(f)
	sig := s.Sign(f, keylesstest.Request{Cert: keylesstest.Cert{Identity: keyless.Identity{Issuer: google, Subject: alice}}, Namespace: ns, Data: data})
	armored := sig.Armor(f)
	entry, err := proto.Marshal(sig.Entry)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(entry)
	f.Fuzz(func(t *testing.T, e []byte) {
		err := trust.EntryForFuzz(armored, e)
		if err != nil && !errors.Is(err, keyless.ErrBadSignature) {
			t.Fatalf("error without ErrBadSignature: %v", err)
		}
	})
}

// FuzzCheckpoint: only the signed checkpoint verifies.
func FuzzCheckpoint(f *testing.F) {
	s := keylesstest.New(f)
	trust := s.Trust(f)
	sig := s.Sign(f, keylesstest.Request{Cert: keylesstest.Cert{Identity: keyless.Identity{Issuer: google, Subject: alice}}, Namespace: ns, Data: data})
	good := sig.Entry.InclusionProof.Checkpoint.Envelope
	f.Add(good)
	f.Add("o\n1\nAA==\n\n\u2014 o AAAAAAA=\n")
	f.Fuzz(func(t *testing.T, env string) {
		_, _, err := trust.CheckpointForFuzz(env)
		if err != nil && !errors.Is(err, keyless.ErrBadSignature) {
			t.Fatalf("error without ErrBadSignature: %v", err)
		}
		// Only the signed text (with any signature lines after it) verifies.
		text, _, _ := strings.Cut(good, "\n\n")
		if err == nil && !strings.HasPrefix(env, text+"\n\n") {
			t.Fatalf("forged checkpoint verified: %q", env)
		}
	})
}

// FuzzNewTrust: pinned material is parsed strictly, without panics.
func FuzzNewTrust(f *testing.F) {
	s := keylesstest.New(f)
	f.Add(s.FulcioPEM(), s.RekorPEM())
	f.Fuzz(func(t *testing.T, fulcio, rekor []byte) {
		if _, err := keyless.NewTrust(fulcio, rekor); err != nil && !errors.Is(err, keyless.ErrBadTrust) {
			t.Fatalf("error without ErrBadTrust: %v", err)
		}
	})
}
