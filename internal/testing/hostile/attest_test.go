package hostile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/attest"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// envelope is a valid approval envelope of moving main from old to new,
// signed by key.
func (f *fixture) envelope(key string, old, new gitrepo.Hash) []byte {
	f.t.Helper()
	st, err := attest.Approval{Ref: "refs/heads/main", From: old, To: new}.Statement()
	if err != nil {
		f.t.Fatal(err)
	}
	env, err := attest.Sign(st, f.signer(key))
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := attest.ParseEnvelope(env); err != nil {
		f.t.Fatalf("a fresh envelope does not parse: %v", err)
	}
	return env
}

// TestEnvelopeHostile: hostile envelopes are refused by
// attest.ParseEnvelope with ErrMalformed within bounded memory.
func TestEnvelopeHostile(t *testing.T) {
	f := newFixture(t, 1)
	env := string(f.envelope("bob", gitrepo.Hash{1}, gitrepo.Hash{2}))
	var w struct {
		PayloadType string `json:"payloadType"`
		Payload     string `json:"payload"`
		Signatures  []struct {
			KeyID string `json:"keyid"`
			Sig   string `json:"sig"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal([]byte(env), &w); err != nil {
		t.Fatal(err)
	}
	sig := w.Signatures[0].Sig
	cases := map[string]string{
		"10 MB":                           strings.Replace(env, `"payloadType"`, `"x":"`+strings.Repeat("A", 10*mib)+`","payloadType"`, 1),
		"10 MB payload":                   strings.Replace(env, `"payload":"`, `"payload":"`+strings.Repeat("QUFB", 10*mib/4), 1),
		"arrays nested 10 000 deep":       string(nested("[", "]", 10_000)),
		"objects nested 10 000 deep":      string(nested(`{"a":`, "}", 10_000)),
		"nesting in the signatures":       strings.Replace(env, `"signatures":[`, `"signatures":[`+string(nested("[", "]", 10_000))+",", 1),
		"duplicated payloadType":          strings.Replace(env, `"payloadType"`, `"payloadType":"text/plain","payloadType"`, 1),
		"duplicate spelled p\\u0061yload": strings.Replace(env, `"payload":`, `"p\u0061yload":"e30=","payload":`, 1),
		"duplicated signature key":        strings.Replace(env, `"sig":`, `"sig":"AAAA","sig":`, 1),
		"unknown key":                     strings.Replace(env, `"payloadType"`, `"x":1,"payloadType"`, 1),
		"key in other case":               strings.Replace(env, `"payloadType"`, `"PayloadType"`, 1),
		"two signatures":                  strings.Replace(env, `"signatures":[`, `"signatures":[{"keyid":"`+w.Signatures[0].KeyID+`","sig":"`+sig+`"},`, 1),
		"base64 with a line break":        strings.Replace(env, sig, sig[:20]+`\n`+sig[20:], 1),
		"base64 URL alphabet":             strings.Replace(env, w.Payload, strings.NewReplacer("+", "-", "/", "_").Replace(w.Payload)+"-_", 1),
		"base64 padding altered":          alterPadding(env, w.Payload, sig),
		"invalid UTF-8":                   strings.Replace(env, `"payloadType":"`, "\"payloadType\":\"\xff", 1),
		"payloadType escaped otherwise":   strings.Replace(env, `"application/vnd.in-toto+json"`, `"application/vnd.in-toto+json\u0000"`, 1),
		"trailing garbage":                env + "{}",
		"keyid of another key":            strings.Replace(env, w.Signatures[0].KeyID, "SHA256:"+strings.Repeat("A", 43), 1),
		"empty":                           "",
		"null":                            "null",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			err := bounded(t, 64*mib, func() error { _, err := attest.ParseEnvelope([]byte(in)); return err })
			wantErr(t, "attest.ParseEnvelope", err, attest.ErrMalformed)
			if err != nil && len(err.Error()) > 4*kib {
				t.Errorf("unbounded error message (%d bytes)", len(err.Error()))
			}
		})
	}
	// Insignificant whitespace is not part of the format (docs/format.md
	// lets readers accept any JSON meeting the rules; the signature covers
	// the payload bytes): whatever ParseEnvelope decides, it is one of
	// "accepted with the same fields" or ErrMalformed.
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, []byte(env), "", "  "); err != nil {
		t.Fatal(err)
	}
	e, err := attest.ParseEnvelope(pretty.Bytes())
	switch {
	case err != nil:
		wantErr(t, "pretty-printed envelope", err, attest.ErrMalformed)
	default:
		orig, _ := attest.ParseEnvelope([]byte(env))
		if e.KeyID != orig.KeyID || !bytes.Equal(e.Payload, orig.Payload) || !bytes.Equal(e.Sig, orig.Sig) {
			t.Errorf("the pretty-printed envelope decodes to other fields")
		}
	}
}

// alterPadding removes the padding of the payload's or the signature's
// base64, or adds padding where there is none.
func alterPadding(env, payload, sig string) string {
	for _, s := range []string{payload, sig} {
		if strings.HasSuffix(s, "=") {
			return strings.Replace(env, s, strings.TrimRight(s, "="), 1)
		}
	}
	return strings.Replace(env, sig, sig+"==", 1)
}

// storeWith makes the attestation store hold, under the approvals
// directory of (main, old, new), exactly files (name -> content), and
// returns a function putting the store back.
func (f *fixture) storeWith(old, new gitrepo.Hash, files map[string][]byte) func() {
	f.t.Helper()
	dir := strings.TrimPrefix(attest.ApprovalDir("refs/heads/main", old, new), "approvals/")
	var entries []gitrepo.TreeEntry
	blobs := map[string]gitrepo.Hash{}
	for name, data := range files {
		sum := fmt.Sprintf("%x", data)
		h, ok := blobs[sum]
		if !ok {
			var err error
			if h, err = f.g.WriteObject("blob", data); err != nil {
				f.t.Fatal(err)
			}
			blobs[sum] = h
		}
		entries = append(entries, gitrepo.TreeEntry{Mode: gitrepo.ModeFile, Name: name, Hash: h})
	}
	inner, err := f.g.WriteTree(entries)
	if err != nil {
		f.t.Fatal(err)
	}
	mid, err := f.g.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeTree, Name: dir, Hash: inner}})
	if err != nil {
		f.t.Fatal(err)
	}
	top, err := f.g.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeTree, Name: "approvals", Hash: mid}})
	if err != nil {
		f.t.Fatal(err)
	}
	cur := f.ref(attest.Ref)
	var parents []gitrepo.Hash
	if !cur.IsZero() {
		parents = []gitrepo.Hash{cur}
	}
	who, _ := f.r.Ident()
	c, err := f.g.WriteObject("commit", gitrepo.EncodeCommit(top, parents, who, who, "git-secure: hostile\n"))
	if err != nil {
		f.t.Fatal(err)
	}
	f.setRef(attest.Ref, cur, c)
	return func() { f.setRef(attest.Ref, c, cur) }
}

// TestApprovalsHostile: a rule needing two persons; alice records main and
// the approvals directory of that exact update is filled with hostile
// files. Verify must fail closed where the approval is missing, count a
// real approval among the junk, and say what is wrong in bounded words.
func TestApprovalsHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: large hostile objects")
	}
	f := newFixture(t, 2)
	old := f.ref("refs/heads/main")
	f.s.Commit(f.dir, "approved.txt", "x\n", "needs bob")
	new := f.ref("refs/heads/main")
	res, err := f.r.Record("main", f.keys["alice"].Private)
	if err != nil {
		t.Fatalf("alice records main: %v", err)
	}
	entry := fmt.Sprintf("entry #%d", res.Entry)
	f.mustFail("no approval", 64*mib, verify.ErrThreshold, entry)
	bobEnv := f.envelope("bob", old, new)
	bobFile := attest.SignerFile(f.pub("bob"))

	t.Run("10 MB envelope", func(t *testing.T) {
		big := append(append([]byte(nil), bobEnv[:len(bobEnv)-1]...), []byte(`,"x":"`+strings.Repeat("A", 10*mib)+`"}`)...)
		restore := f.storeWith(old, new, map[string][]byte{strings.Repeat("ab", 32) + ".json": big, bobFile: bobEnv})
		// The oversized file cannot be an envelope: it is ignored (noted),
		// it neither blocks the update nor turns verification into an I/O
		// error, and bob's real approval beside it still counts.
		err := bounded(t, 32*mib, func() error { _, err := f.verify(); return err })
		if err != nil {
			t.Errorf("a 10 MB junk file beside bob's approval: verify = %v; want success (junk ignored, approval counted)", clip(err.Error()))
		}
		// Back to a store that never held bob's approval: one whose
		// history held it still counts it (the store is append-only).
		restore()
		restoreOnly := f.storeWith(old, new, map[string][]byte{strings.Repeat("ab", 32) + ".json": big})
		defer restoreOnly()
		err = bounded(t, 32*mib, func() error { _, err := f.verify(); return err })
		var failed *verify.Failed
		if !errors.As(err, &failed) || !errors.Is(err, verify.ErrThreshold) || !strings.Contains(err.Error(), entry) {
			t.Errorf("only a 10 MB junk file: verify = %v; want a threshold problem on %s", clip(fmt.Sprint(err)), entry)
		}
	})

	// 10 000 junk files: half with names readers must ignore, half named
	// like envelopes but holding junk (JSON bombs, other signers' files,
	// envelopes for other updates).
	junk := map[string][]byte{}
	other := f.envelope("bob", new, old) // bob's approval of the reverse update
	mallory := f.envelope("mallory", old, new)
	for i := 0; i < 5000; i++ {
		junk[fmt.Sprintf("junk-%05d.txt", i)] = []byte("junk")
		var content []byte
		switch i % 4 {
		case 0:
			content = []byte("{}")
		case 1:
			content = nested("[", "]", 2000)
		case 2:
			content = other
		case 3:
			content = mallory
		}
		junk[fmt.Sprintf("%064x.json", i+1)] = content
	}
	t.Run("10 000 junk files without bob", func(t *testing.T) {
		restore := f.storeWith(old, new, junk)
		defer restore()
		failed := f.mustFail("junk only", 256*mib, verify.ErrThreshold, entry)
		if failed != nil {
			if n := len(failed.Error()); n > 64*kib {
				t.Errorf("with 10 000 junk files in the approvals directory of %s, verify's error is %d bytes (%.1f KiB): it lists every ignored file (\"approval X ignored: ...\") in the problem's detail, unbounded; first 400 bytes: %.400s", entry, n, float64(n)/1024, failed.Error())
			}
		}
	})
	t.Run("10 000 junk files and bob's approval", func(t *testing.T) {
		files := map[string][]byte{bobFile: bobEnv}
		for k, v := range junk {
			files[k] = v
		}
		restore := f.storeWith(old, new, files)
		defer restore()
		if err := bounded(t, 256*mib, func() error { _, err := f.verify(); return err }); err != nil {
			t.Errorf("bob's approval among 10 000 junk files does not count: %v", clip(err.Error()))
		}
	})
	t.Run("bob's approval under mallory's file name", func(t *testing.T) {
		restore := f.storeWith(old, new, map[string][]byte{attest.SignerFile(f.pub("mallory")): bobEnv})
		defer restore()
		f.mustFail("misfiled", 64*mib, verify.ErrThreshold, entry)
	})
}
