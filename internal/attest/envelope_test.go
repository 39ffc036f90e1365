package attest

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// keyFile makes a key with ssh-keygen and loads it.
func keyFile(t *testing.T, s *testutil.Sandbox, name, typ string) ssh.Signer {
	t.Helper()
	k := s.NewKey(name, typ)
	pem, err := os.ReadFile(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(k.PublicLine(t)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pub.Marshal(), signer.PublicKey().Marshal()) {
		t.Fatal("public key file does not match private key")
	}
	return signer
}

// seedSigner is a deterministic in-process ed25519 key (for fuzz seeds).
func seedSigner(tb testing.TB, seed byte) ssh.Signer {
	tb.Helper()
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize)))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func trust(keys ...ssh.PublicKey) func(string) (ssh.PublicKey, bool) {
	m := map[string]ssh.PublicKey{}
	for _, k := range keys {
		m[sign.Fingerprint(k)] = k
	}
	return func(fp string) (ssh.PublicKey, bool) {
		k, ok := m[fp]
		return k, ok
	}
}

var h0time = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func testApproval(t testing.TB) []byte {
	t.Helper()
	st, err := Approval{Ref: "refs/heads/main", From: h(1), To: h(2)}.Statement()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSignVerify(t *testing.T) {
	sb := testutil.NewSandbox(t)
	st := testApproval(t)
	for _, typ := range []string{"ed25519", "ecdsa", "rsa"} {
		t.Run(typ, func(t *testing.T) {
			a := keyFile(t, sb, "alice-"+typ, typ)
			b := keyFile(t, sb, "bob-"+typ, typ)
			env, err := Sign(st, a)
			if err != nil {
				t.Fatal(err)
			}
			e, err := ParseEnvelope(env)
			if err != nil {
				t.Fatalf("%s: %v", env, err)
			}
			if e.PayloadType != PayloadType || !bytes.Equal(e.Payload, st) || e.KeyID != sign.Fingerprint(a.PublicKey()) {
				t.Fatalf("envelope = %+v", e)
			}
			// The wire form is exactly the documented one.
			want := `{"payloadType":"application/vnd.in-toto+json","payload":"` + base64.StdEncoding.EncodeToString(st) +
				`","signatures":[{"keyid":"` + e.KeyID + `","sig":"` + base64.StdEncoding.EncodeToString(e.Sig) + `"}]}`
			if string(env) != want {
				t.Fatalf("envelope:\n got %s\nwant %s", env, want)
			}
			if re, err := e.Marshal(); err != nil || !bytes.Equal(re, env) {
				t.Fatalf("Marshal = %s, %v", re, err)
			}
			// The signature is an SSHSIG over PAE in the attestation namespace.
			if _, err := sign.VerifyRaw(e.Sig, dsse.PAE(PayloadType, st), sign.NamespaceAttestation, trust(a.PublicKey())); err != nil {
				t.Fatalf("VerifyRaw over PAE: %v", err)
			}
			pub, err := e.Verify(trust(b.PublicKey(), a.PublicKey()))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(pub.Marshal(), a.PublicKey().Marshal()) {
				t.Fatal("Verify returned another key")
			}
			if SignerFile(pub) != SignerFile(a.PublicKey()) || CheckSignerFile(SignerFile(pub), e) != nil {
				t.Fatal("signer file mismatch")
			}
			if err := CheckSignerFile(SignerFile(b.PublicKey()), e); !errors.Is(err, ErrMismatch) {
				t.Fatalf("CheckSignerFile(bob) = %v", err)
			}
			got, err := ParseApproval(e.Payload)
			if err != nil || got.Matches("refs/heads/main", h(1), h(2)) != nil {
				t.Fatalf("payload: %+v %v", got, err)
			}

			// Untrusted signer.
			if _, err := e.Verify(trust(b.PublicKey())); !errors.Is(err, sign.ErrUnknownKey) {
				t.Fatalf("untrusted: %v", err)
			}
			// Tampered payload (re-encoded envelope, still well-formed).
			t2 := *e
			t2.Payload = bytes.Replace(bytes.Clone(e.Payload), []byte("refs/heads/main"), []byte("refs/heads/mair"), 2)
			tampered, err := t2.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			e2, err := ParseEnvelope(tampered)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e2.Verify(trust(a.PublicKey())); !errors.Is(err, sign.ErrBadSignature) {
				t.Fatalf("tampered payload: %v", err)
			}
			// Tampered signature bytes.
			t3 := *e
			t3.Sig = bytes.Clone(e.Sig)
			t3.Sig[len(t3.Sig)-1] ^= 1
			if _, err := t3.Verify(trust(a.PublicKey())); !errors.Is(err, sign.ErrBadSignature) {
				t.Fatalf("tampered sig: %v", err)
			}
			// keyid naming another key than the one embedded in the signature.
			t4 := *e
			t4.KeyID = sign.Fingerprint(b.PublicKey())
			if _, err := t4.Verify(trust(a.PublicKey(), b.PublicKey())); !errors.Is(err, ErrMalformed) {
				t.Fatalf("keyid mismatch Verify: %v", err)
			}
			bad := strings.Replace(string(env), e.KeyID, t4.KeyID, 1)
			if _, err := ParseEnvelope([]byte(bad)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("keyid mismatch ParseEnvelope: %v", err)
			}
			// A trusted key registered under the signer's fingerprint but
			// differing from it is not accepted.
			lying := func(fp string) (ssh.PublicKey, bool) { return b.PublicKey(), true }
			if _, err := e.Verify(lying); !errors.Is(err, sign.ErrUnknownKey) {
				t.Fatalf("lying lookup: %v", err)
			}
		})
	}
}

func TestVerifyWrongNamespaceAndPAE(t *testing.T) {
	a := seedSigner(t, 1)
	st := testApproval(t)
	fp := sign.Fingerprint(a.PublicKey())
	mk := func(sig []byte) *Envelope {
		return &Envelope{PayloadType: PayloadType, Payload: st, KeyID: fp, Sig: sig}
	}

	// Signed in another namespace: rejected structurally.
	sig, err := sign.SignRaw(a, dsse.PAE(PayloadType, st), sign.NamespaceAttestation+"x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mk(sig).Verify(trust(a.PublicKey())); !errors.Is(err, ErrMalformed) {
		t.Fatalf("other namespace: %v", err)
	}
	// Signed over the raw payload instead of PAE.
	sig, err = sign.SignRaw(a, st, sign.NamespaceAttestation)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mk(sig).Verify(trust(a.PublicKey())); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("no PAE: %v", err)
	}
	// Signed with another payloadType in PAE.
	sig, err = sign.SignRaw(a, dsse.PAE("application/json", st), sign.NamespaceAttestation)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mk(sig).Verify(trust(a.PublicKey())); !errors.Is(err, sign.ErrBadSignature) {
		t.Fatalf("other PAE type: %v", err)
	}
}

func TestSignRefusesBadStatements(t *testing.T) {
	a := seedSigner(t, 1)
	for _, st := range []string{``, `{}`, `not json`, strings.Replace(string(testApproval(t)), `"formatVersion":1`, `"formatVersion":2`, 1)} {
		if _, err := Sign([]byte(st), a); !errors.Is(err, ErrMalformed) {
			t.Errorf("Sign(%q) = %v", st, err)
		}
	}
	tr, err := TestRun{Tree: h(1), Command: []string{"go", "test"}, StartedAt: h0time}.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, err := Sign(tr, a)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Verify(trust(a.PublicKey())); err != nil {
		t.Fatal(err)
	}
	if got, err := ParseTestRun(e.Payload); err != nil || got.Tree != h(1) {
		t.Fatalf("%+v %v", got, err)
	}
}

// envFields builds an envelope JSON from raw field texts.
func envJSON(payloadType, payload, sigs string) string {
	return `{"payloadType":` + payloadType + `,"payload":` + payload + `,"signatures":` + sigs + `}`
}

func TestParseEnvelopeStrict(t *testing.T) {
	a, b := seedSigner(t, 1), seedSigner(t, 2)
	st := testApproval(t)
	env, err := Sign(st, a)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ParseEnvelope(env)
	if err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	pt := q(PayloadType)
	pl := q(base64.StdEncoding.EncodeToString(st))
	kid := q(e.KeyID)
	sg := q(base64.StdEncoding.EncodeToString(e.Sig))
	sig1 := `{"keyid":` + kid + `,"sig":` + sg + `}`
	good := envJSON(pt, pl, `[`+sig1+`]`)
	if good != string(env) {
		t.Fatalf("test helper out of sync:\n%s\n%s", good, env)
	}
	// Accepted spellings.
	for name, s := range map[string]string{
		"whitespace": strings.ReplaceAll(good, `,`, " ,\n "),
		"key order":  `{"signatures":[{"sig":` + sg + `,"keyid":` + kid + `}],"payload":` + pl + `,"payloadType":` + pt + `}`,
		"escaped /":  strings.Replace(good, `application/vnd`, `application\/vnd`, 1),
	} {
		if _, err := ParseEnvelope([]byte(s)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	bsig, err := sign.SignRaw(b, dsse.PAE(PayloadType, st), sign.NamespaceAttestation)
	if err != nil {
		t.Fatal(err)
	}
	sig2 := `{"keyid":` + q(sign.Fingerprint(b.PublicKey())) + `,"sig":` + q(base64.StdEncoding.EncodeToString(bsig)) + `}`
	b64 := base64.StdEncoding.EncodeToString(st)
	sigB64 := base64.StdEncoding.EncodeToString(e.Sig)
	otherNS, err := sign.SignRaw(a, dsse.PAE(PayloadType, st), "git")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"unknown top-level field": strings.TrimSuffix(good, `}`) + `,"extra":1}`,
		"unknown signature field": envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":`+sg+`,"cert":""}]`),
		"duplicate key":           strings.TrimSuffix(good, `}`) + `,"payload":` + pl + `}`,
		"duplicate signature key": envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":`+sg+`,"sig":`+sg+`}]`),
		"duplicate escaped key":   strings.TrimSuffix(good, `}`) + `,"p\u0061yload":` + pl + `}`,
		"two signatures":          envJSON(pt, pl, `[`+sig1+`,`+sig2+`]`),
		"same signature twice":    envJSON(pt, pl, `[`+sig1+`,`+sig1+`]`),
		"no signatures":           envJSON(pt, pl, `[]`),
		"signatures null":         envJSON(pt, pl, `null`),
		"signatures object":       envJSON(pt, pl, sig1),
		"missing keyid":           envJSON(pt, pl, `[{"sig":`+sg+`}]`),
		"missing payload":         `{"payloadType":` + pt + `,"signatures":[` + sig1 + `]}`,
		"case-folded key":         strings.Replace(good, `"payloadType"`, `"PayloadType"`, 1),
		"wrong payloadType":       envJSON(q("application/json"), pl, `[`+sig1+`]`),
		"payloadType not string":  envJSON(`1`, pl, `[`+sig1+`]`),
		"url base64 payload":      envJSON(pt, q(base64.URLEncoding.EncodeToString(st)), `[`+sig1+`]`),
		"unpadded payload":        envJSON(pt, q(base64.RawStdEncoding.EncodeToString(st)), `[`+sig1+`]`),
		"newline in payload":      envJSON(pt, q(b64[:10]+"\n"+b64[10:]), `[`+sig1+`]`),
		"escaped newline payload": envJSON(pt, `"`+b64[:10]+`\n`+b64[10:]+`"`, `[`+sig1+`]`),
		"non-zero padding bits":   envJSON(pt, q(nonCanonicalPadding(b64)), `[`+sig1+`]`),
		"bad base64 payload":      envJSON(pt, q("!!!!"), `[`+sig1+`]`),
		"empty payload":           envJSON(pt, q(""), `[`+sig1+`]`),
		"bad base64 sig":          envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":"`+sigB64[:len(sigB64)-1]+`"}]`),
		"url base64 sig":          envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":`+q(base64.URLEncoding.EncodeToString(e.Sig))+`}]`),
		"sig not SSHSIG":          envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":`+q(base64.StdEncoding.EncodeToString([]byte("hello")))+`}]`),
		"sig trailing bytes":      envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":`+q(base64.StdEncoding.EncodeToString(append(bytes.Clone(e.Sig), 0)))+`}]`),
		"sig truncated":           envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":`+q(base64.StdEncoding.EncodeToString(e.Sig[:len(e.Sig)-1]))+`}]`),
		"sig other namespace":     envJSON(pt, pl, `[{"keyid":`+kid+`,"sig":`+q(base64.StdEncoding.EncodeToString(otherNS))+`}]`),
		"keyid of other key":      envJSON(pt, pl, `[{"keyid":`+q(sign.Fingerprint(b.PublicKey()))+`,"sig":`+sg+`}]`),
		"keyid MD5 style":         envJSON(pt, pl, `[{"keyid":`+q(ssh.FingerprintLegacyMD5(a.PublicKey()))+`,"sig":`+sg+`}]`),
		"keyid padded":            envJSON(pt, pl, `[{"keyid":`+q(e.KeyID+"=")+`,"sig":`+sg+`}]`),
		"keyid lowercase prefix":  envJSON(pt, pl, `[{"keyid":`+q("sha256:"+strings.TrimPrefix(e.KeyID, "SHA256:"))+`,"sig":`+sg+`}]`),
		"keyid empty":             envJSON(pt, pl, `[{"keyid":"","sig":`+sg+`}]`),
		"invalid utf-8":           strings.Replace(good, `application/vnd`, "application/\xffvnd", 1),
		"trailing data":           good + `{}`,
		"not an object":           `[` + good + `]`,
		"too large":               good + strings.Repeat(" ", MaxEnvelopeSize),
		"statement too large":     envJSON(pt, q(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte(" "), MaxStatementSize+1))), `[`+sig1+`]`),
	}
	if !strings.ContainsAny(b64, "+/") {
		delete(cases, "url base64 payload")
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			if got, err := ParseEnvelope([]byte(s)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseEnvelope(%.200s) = %+v, %v; want ErrMalformed", s, got, err)
			}
		})
	}
}

// nonCanonicalPadding flips a padding bit of the last base64 quantum if the
// encoding has padding (so it decodes leniently to the same bytes).
func nonCanonicalPadding(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	i := strings.IndexByte(s, '=')
	if i < 1 {
		return s + "!" // no padding: make it invalid instead
	}
	c := strings.IndexByte(alphabet, s[i-1])
	return s[:i-1] + string(alphabet[c|1]) + s[i:]
}
