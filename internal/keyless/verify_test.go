package keyless_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/keyless"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
	rekorpb "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
)

const (
	google = "https://accounts.google.com"
	github = "https://token.actions.githubusercontent.com"
	alice  = "alice@example.com"
	ns     = "git-secure-policy-v1"
)

var data = []byte("policy change\n")

func TestVerifyTestSigstore(t *testing.T) {
	s := keylesstest.New(t)
	for _, c := range []keylesstest.Cert{
		{Identity: keyless.Identity{Issuer: google, Subject: alice}},
		{Identity: keyless.Identity{Issuer: google, Subject: alice}, IssuerV1Only: true},
		{Identity: keyless.Identity{Issuer: github, Subject: "https://github.com/org/repo/.github/workflows/release.yml@refs/heads/main"}},
	} {
		for _, namespace := range []string{ns, keyless.NamespaceGit} {
			sig := s.Sign(t, keylesstest.Request{Cert: c, Namespace: namespace, Data: data}).Armor(t)
			v, err := keyless.VerifyAs(sig, data, namespace, s.Trust(t), c.Identity)
			if err != nil {
				t.Fatalf("%v %s: %v", c.Identity, namespace, err)
			}
			if time.Since(v.Time) > time.Minute || v.LogIndex < 5 {
				t.Errorf("time %v, index %d", v.Time, v.LogIndex)
			}
		}
	}
}

func TestVerifyRefusals(t *testing.T) {
	s, other := keylesstest.New(t), keylesstest.New(t)
	id := keyless.Identity{Issuer: google, Subject: alice}
	now := time.Now()
	otherSig := s.Sign(t, keylesstest.Request{Cert: keylesstest.Cert{Identity: id}, Namespace: ns, Data: []byte("other")})
	for _, tc := range []struct {
		name    string
		req     func(*keylesstest.Request)
		alter   func(*keylesstest.Signature)
		armored func([]byte) []byte
		data    []byte
		ns      string
		want    keyless.Identity
		err     string
	}{
		{name: "wrong issuer", want: keyless.Identity{Issuer: github, Subject: alice}, err: "signed by alice@example.com (https://accounts.google.com), want alice@example.com (https://token.actions"},
		{name: "wrong subject", want: keyless.Identity{Issuer: google, Subject: "mallory@example.com"}, err: "signed by alice@example.com"},
		{name: "wrong payload", data: []byte("policy change!\n"), err: "signature is not over this data"},
		{name: "wrong namespace", ns: "git-secure-attestation-v1", err: `not over this data in namespace "git-secure-attestation-v1"`},
		{name: "git namespace", ns: keyless.NamespaceGit, err: `not over this data in namespace "git"`},
		{name: "expired cert at signing time", req: func(r *keylesstest.Request) {
			r.NotBefore, r.NotAfter = now.Add(-30*time.Minute), now.Add(-20*time.Minute)
		}, err: "certificate has expired or is not yet valid"},
		{name: "cert not yet valid", req: func(r *keylesstest.Request) {
			r.NotBefore, r.NotAfter = now.Add(time.Minute), now.Add(10*time.Minute)
		}, err: "certificate has expired or is not yet valid"},
		{name: "wrong root", req: func(r *keylesstest.Request) { r.Fulcio = other }, err: "certificate signed by unknown authority"},
		{name: "other Rekor", alter: func(sig *keylesstest.Signature) {
			*sig = *other.Sign(t, keylesstest.Request{Cert: keylesstest.Cert{Identity: id, Fulcio: s}, Namespace: ns, Data: data})
		}, err: "not the pinned Rekor log"},
		{name: "bad SET", alter: func(sig *keylesstest.Signature) {
			sig.Entry.InclusionPromise.SignedEntryTimestamp[10] ^= 1
		}, err: "signed entry timestamp does not verify"},
		{name: "integrated time moved", alter: func(sig *keylesstest.Signature) { sig.Entry.IntegratedTime -= 3600 },
			err: "signed entry timestamp does not verify"},
		{name: "entry of another signature", alter: func(sig *keylesstest.Signature) { sig.Entry = otherSig.Entry },
			err: "signed entry timestamp does not verify"},
		{name: "no SET", alter: func(sig *keylesstest.Signature) { sig.Entry.InclusionPromise = nil },
			err: "signed entry timestamp does not verify"},
		{name: "bad inclusion proof", alter: func(sig *keylesstest.Signature) { sig.Entry.InclusionProof.Hashes[0][0] ^= 1 },
			err: "Rekor inclusion proof"},
		{name: "proof for another tree size", alter: func(sig *keylesstest.Signature) { sig.Entry.InclusionProof.TreeSize++ },
			err: "Rekor inclusion proof"},
		{name: "no inclusion proof", alter: func(sig *keylesstest.Signature) { sig.Entry.InclusionProof = nil },
			err: "without inclusion proof"},
		{name: "checkpoint altered", alter: func(sig *keylesstest.Signature) {
			cp := sig.Entry.InclusionProof.Checkpoint
			cp.Envelope = strings.Replace(cp.Envelope, "Timestamp: ", "Timestamp: 1", 1)
		}, err: "checkpoint is not signed by the pinned Rekor key"},
		{name: "checkpoint of another signature", alter: func(sig *keylesstest.Signature) {
			sig.Entry.InclusionProof.Checkpoint = otherSig.Entry.InclusionProof.Checkpoint
		}, err: "is not the inclusion proof's tree"},
		{name: "no checkpoint", alter: func(sig *keylesstest.Signature) { sig.Entry.InclusionProof.Checkpoint = nil },
			err: "checkpoint is not a signed note"},
		{name: "wrong entry kind", alter: func(sig *keylesstest.Signature) {
			sig.Entry.KindVersion = &rekorpb.KindVersion{Kind: "hashedrekord", Version: "0.0.2"}
		}, err: "Rekor entry kind"},
		{name: "no Rekor entry", alter: func(sig *keylesstest.Signature) { sig.Entry = nil }, err: "no Rekor entry in the signature"},
		{name: "signature by another key", alter: func(sig *keylesstest.Signature) { sig.Sig = otherSig.Sig },
			err: "does not verify with its certificate's key"},
		{name: "certificate of another signer", alter: func(sig *keylesstest.Signature) { sig.Leaf = otherSig.Leaf },
			err: "does not verify with its certificate's key"},
		{name: "no issuer", req: func(r *keylesstest.Request) { r.Issuer = "" }, want: keyless.Identity{Subject: alice},
			err: "exactly one email or URI subject and an issuer"},
		{name: "data after armor", armored: func(b []byte) []byte { return append(b, "x"...) }, err: "data after the signature"},
		{name: "two blocks", armored: func(b []byte) []byte { return append(b, b...) }, err: "data after the signature"},
		{name: "not armored", armored: func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("SIGNED MESSAGE"), []byte("PGP SIGNATURE")) }, err: "not a \"SIGNED MESSAGE\" PEM block"},
		{name: "too large", armored: func(b []byte) []byte { return append(b, bytes.Repeat([]byte(" "), keyless.MaxSignatureSize)...) }, err: "exceeds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := keylesstest.Request{Cert: keylesstest.Cert{Identity: id}, Namespace: ns, Data: data, Time: now}
			if tc.req != nil {
				tc.req(&r)
			}
			sig := s.Sign(t, r)
			if tc.alter != nil {
				tc.alter(sig)
			}
			armored := sig.Armor(t)
			if tc.armored != nil {
				armored = tc.armored(armored)
			}
			d, n, want := data, ns, id
			if tc.data != nil {
				d = tc.data
			}
			if tc.ns != "" {
				n = tc.ns
			}
			if tc.want != (keyless.Identity{}) {
				want = tc.want
			}
			_, err := keyless.VerifyAs(armored, d, n, s.Trust(t), want)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("got %v, want an error containing %q", err, tc.err)
			}
		})
	}
}
