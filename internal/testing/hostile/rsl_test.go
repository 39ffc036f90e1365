package hostile

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/verify"
)

// TestHugeEntryMessage: an entry commit whose message is 50 MB. The
// decoder refuses it from its length; reading the log refuses the commit
// without loading it; verify fails closed naming the commit.
func TestHugeEntryMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: large hostile objects")
	}
	f := newFixture(t, 1)
	tip, last := f.tip()
	main := f.ref("refs/heads/main")
	head := entryMsg(last.Number+1, "refs/heads/main", main, tip) // any valid-looking header
	msg := []byte(head + strings.Repeat("x", 50*mib) + "\n")

	err := bounded(t, 1*mib, func() error { _, err := rsl.Decode(msg); return err })
	wantErr(t, "rsl.Decode of a 50 MB message", err, rsl.ErrMalformed, "larger than")

	id, restore := f.appendRaw("alice", msg)
	defer restore()
	msg = nil
	err = bounded(t, 16*mib, func() error { _, err := rsl.ReadLog(f.g, id); return err })
	wantErr(t, "rsl.ReadLog through a 50 MB entry", err, gitrepo.ErrTooLarge, id.String())
	f.mustFail("verify with a 50 MB entry", 16*mib, verify.ErrMalformed, id.String(), "exceeds")
}

// skipLines returns n skip lines for entries 1..n.
func skipLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "skip: %d %040x\n", i, i)
	}
	return b.String()
}

// TestAnnotationSkipsTooMany: an annotation skipping 100 000 entries (a
// 5.7 MB message), and one skipping 1001 (within the 64 KiB message limit,
// over MaxSkips).
func TestAnnotationSkipsTooMany(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: large hostile objects")
	}
	f := newFixture(t, 1)
	_, last := f.tip()
	for _, n := range []int{100_000, rsl.MaxSkips + 1} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			num := uint64(n) + last.Number + 10
			msg := []byte(fmt.Sprintf("rsl #%d: annotate\n\nformat: %s\nnumber: %d\ntype: annotation\n%sreason: mistaken\n", num, rsl.Format, num, skipLines(n)))
			t.Logf("%d skips: %d bytes", n, len(msg))
			err := bounded(t, 2*mib, func() error { _, err := rsl.Decode(msg); return err })
			wantErr(t, "rsl.Decode", err, rsl.ErrMalformed)
			if n == rsl.MaxSkips+1 && err != nil && !strings.Contains(err.Error(), "too many skips") {
				t.Errorf("the error does not say there are too many skips: %v", err)
			}
			id, restore := f.appendRaw("alice", msg)
			defer restore()
			f.mustFail("verify", 32*mib, verify.ErrMalformed, id.String())
		})
	}
}

// canonical is a valid ref entry's message.
func canonical(t *testing.T, n uint64, old, new gitrepo.Hash) string {
	t.Helper()
	e := &rsl.Entry{Number: n, Type: rsl.TypeRef, Ref: "refs/heads/main", Old: old, New: new}
	b, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rsl.Decode(b); err != nil {
		t.Fatalf("the canonical message does not decode: %v", err)
	}
	return string(b)
}

// TestEntryNonCanonical: every way of writing an entry other than its one
// canonical form is refused, by the decoder and by verify (naming the
// commit), even when the entry is validly signed by a person allowed to
// move the ref.
func TestEntryNonCanonical(t *testing.T) {
	f := newFixture(t, 1)
	_, last := f.tip()
	old := f.ref("refs/heads/main")
	new, err := gitrepo.ParseHash(f.s.Git(f.dir, "commit-tree", old.String()+"^{tree}", "-p", old.String(), "-m", "next"))
	if err != nil {
		t.Fatal(err)
	}
	n := last.Number + 1
	good := canonical(t, n, old, new)
	upper := strings.ToUpper(new.String())
	cases := map[string]string{
		"extra space after a colon":        strings.Replace(good, "number: ", "number:  ", 1),
		"trailing space":                   strings.Replace(good, "type: ref\n", "type: ref \n", 1),
		"tab instead of space":             strings.Replace(good, "ref: refs", "ref:\trefs", 1),
		"CRLF line ends":                   strings.ReplaceAll(good, "\n", "\r\n"),
		"trailing blank line":              good + "\n",
		"no final newline":                 strings.TrimSuffix(good, "\n"),
		"leading zero in the number":       strings.Replace(good, fmt.Sprintf("number: %d", n), fmt.Sprintf("number: 0%d", n), 1),
		"plus sign in the number":          strings.Replace(good, fmt.Sprintf("number: %d", n), fmt.Sprintf("number: +%d", n), 1),
		"upper-case hex":                   strings.Replace(good, "new: "+new.String(), "new: "+upper, 1),
		"short hash":                       strings.Replace(good, "new: "+new.String(), "new: "+new.String()[:12], 1),
		"title that lies":                  strings.Replace(good, "update refs/heads/main", "update refs/heads/release", 1),
		"unknown field":                    strings.Replace(good, "type: ref\n", "type: ref\nsigner: root\n", 1),
		"fields reordered":                 strings.Replace(good, "old: "+old.String()+"\nnew: "+new.String()+"\n", "new: "+new.String()+"\nold: "+old.String()+"\n", 1),
		"field repeated":                   good + "new: " + new.String() + "\n",
		"escaped character \\u0061":        strings.Replace(good, "ref: refs/heads/main", "ref: refs/heads/m\\u0061in", 1),
		"invalid UTF-8 in the title":       strings.Replace(good, "rsl #", "rsl \xff#", 1),
		"NUL byte":                         strings.Replace(good, "type: ref", "type: ref\x00", 1),
		"unsupported format":               strings.Replace(good, rsl.Format, "git-secure-rsl/2", 1),
		"unknown type":                     strings.Replace(good, "type: ref", "type: refs", 1),
		"number beyond the limit":          strings.ReplaceAll(good, fmt.Sprintf("#%d:", n), "#99999999999999999999:"),
		"UTF-8 BOM":                        "\ufeff" + good,
		"old and new equal":                strings.Replace(good, "old: "+old.String(), "old: "+new.String(), 1),
		"annotation fields in a ref entry": strings.Replace(good, "type: ref\n", "type: ref\nreason: x\n", 1),
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			err := bounded(t, 1*mib, func() error { _, err := rsl.Decode([]byte(msg)); return err })
			wantErr(t, "rsl.Decode", err, rsl.ErrMalformed)
			if strings.ContainsRune(msg, 0) {
				return // git refuses to store a commit message with NUL through hash-object? keep the decoder check only
			}
			id, restore := f.appendRaw("alice", []byte(msg))
			defer restore()
			f.mustFail("verify", 64*mib, verify.ErrMalformed, id.String())
		})
	}
	// The canonical form itself is accepted: the failures above are the
	// variations', not the fixture's.
	id, restore := f.appendRaw("alice", []byte(good))
	f.setRef("refs/heads/main", old, new)
	if _, err := f.verify(); err != nil {
		t.Errorf("the canonical entry %s does not verify: %v", id, err)
	}
	f.setRef("refs/heads/main", new, old)
	restore()
}

// TestReasonHostile: annotation reasons with invalid UTF-8, controls,
// bidi overrides, surrounding space and over 1000 bytes are refused.
func TestReasonHostile(t *testing.T) {
	f := newFixture(t, 1)
	tip, last := f.tip()
	n := last.Number + 1
	msg := func(reason string) string {
		return fmt.Sprintf("rsl #%d: annotate\n\nformat: %s\nnumber: %d\ntype: annotation\nskip: %d %s\nreason: %s\n", n, rsl.Format, n, last.Number, tip, reason)
	}
	cases := map[string]string{
		"invalid UTF-8":             "revoked \xff\xfe push",
		"overlong UTF-8 slash":      "a\xc0\xafb",
		"UTF-16 surrogate in UTF-8": "a\xed\xa0\x80b",
		"C1 control (CSI)":          "a\u009b31mred",
		"ANSI escape":               "a\x1b[31mred",
		"bidi override":             "revert \u202eniam\u202c",
		"zero-width joiner":         "a\u200db",
		"carriage return":           "shown\rhidden",
		"leading space":             " padded",
		"empty":                     "",
		"1001 bytes":                strings.Repeat("r", rsl.MaxReasonLen+1),
	}
	for name, reason := range cases {
		t.Run(name, func(t *testing.T) {
			err := bounded(t, 1*mib, func() error { _, err := rsl.Decode([]byte(msg(reason))); return err })
			wantErr(t, "rsl.Decode", err, rsl.ErrMalformed)
			id, restore := f.appendRaw("alice", []byte(msg(reason)))
			defer restore()
			f.mustFail("verify", 64*mib, verify.ErrMalformed, id.String())
		})
	}
	// Sanity: a plain reason decodes.
	if _, err := rsl.Decode([]byte(msg("mistaken push"))); err != nil {
		t.Errorf("a plain reason is refused: %v", err)
	}
}

// escapingRefs are ref names that try to leave refs/, smuggle a second
// line, or name git-secure's own metadata.
var escapingRefs = map[string]string{
	"dot-dot to config":         "refs/heads/../../config",
	"dot-dot component":         "refs/heads/..",
	"absolute path":             "/etc/passwd",
	"relative path":             "../../config",
	"outside refs/":             "HEAD",
	"embedded newline":          "refs/heads/a\nrefs/heads/b",
	"carriage return":           "refs/heads/a\rrefs/heads/b",
	"control character":         "refs/heads/a\x01b",
	"DEL":                       "refs/heads/a\x7fb",
	"tab":                       "refs/heads/a\tb",
	"NUL":                       "refs/heads/a\x00b",
	"escape sequence":           "refs/heads/\x1b[2Jmain",
	"space":                     "refs/heads/a b",
	"backslash":                 "refs/heads/a\\b",
	"empty component":           "refs/heads//main",
	"trailing slash":            "refs/heads/main/",
	"hidden component":          "refs/heads/.git",
	"lock suffix":               "refs/heads/main.lock",
	"reflog syntax":             "refs/heads/main@{1}",
	"colon (refspec)":           "refs/heads/a:refs/heads/b",
	"glob":                      "refs/heads/*",
	"git-secure's log":          "refs/secure/rsl",
	"git-secure's attestations": "refs/secure/attestations",
	"helper namespace":          "refs/secure-incoming/1/heads/main",
	"remote-tracking ref":       "refs/remotes/origin/main",
	"1025 bytes":                "refs/heads/" + strings.Repeat("a", 1014),
}

// TestEntryEscapingRefNames: entries whose ref tries to escape are refused
// by the decoder and by verify, naming the commit.
func TestEntryEscapingRefNames(t *testing.T) {
	f := newFixture(t, 1)
	_, last := f.tip()
	main := f.ref("refs/heads/main")
	for name, ref := range escapingRefs {
		t.Run(name, func(t *testing.T) {
			msg := entryMsg(last.Number+1, ref, gitrepo.ZeroHash, main)
			err := bounded(t, 1*mib, func() error { _, err := rsl.Decode([]byte(msg)); return err })
			wantErr(t, "rsl.Decode", err, rsl.ErrMalformed)
			if strings.ContainsRune(msg, 0) {
				return
			}
			id, restore := f.appendRaw("alice", []byte(msg))
			defer restore()
			f.mustFail("verify", 64*mib, verify.ErrMalformed, id.String())
		})
	}
}

// TestEntryRefNameUnicode documents what the decoder does with ref names
// that git accepts but that display as something else: invalid UTF-8,
// bidi overrides, C1 controls. docs/format.md only asks for a valid git
// ref name (git check-ref-format accepts these bytes), so they are not
// refused; the test checks that they at least do not alter what is
// decoded (the ref is exactly the bytes signed) and logs the result.
func TestEntryRefNameUnicode(t *testing.T) {
	main := gitrepo.Hash{1}
	for name, ref := range map[string]string{
		"invalid UTF-8":        "refs/heads/ma\xffin",
		"overlong UTF-8 slash": "refs/heads\xc0\xafmain",
		"bidi override":        "refs/heads/\u202eniam",
		"C1 control (CSI)":     "refs/heads/a\u009b2Jb",
		"zero-width space":     "refs/heads/ma\u200bin",
	} {
		msg := entryMsg(5, ref, gitrepo.ZeroHash, main)
		e, err := rsl.Decode([]byte(msg))
		switch {
		case err != nil:
			wantErr(t, name, err, rsl.ErrMalformed)
			t.Logf("%s: refused: %v", name, err)
		case e.Ref != ref:
			t.Errorf("%s: decoded ref %q, signed %q", name, e.Ref, ref)
		default:
			t.Logf("note: %s in a ref name (%q) is accepted by rsl.Decode (a valid git ref name)", name, ref)
		}
	}
}

// TestLogNotAnEntry: the log ref pointing at something that is not an
// entry (a source commit, a tree, a blob, a missing object) fails closed.
func TestLogNotAnEntry(t *testing.T) {
	f := newFixture(t, 1)
	tip, _ := f.tip()
	main := f.ref("refs/heads/main")
	blob, err := f.g.WriteObject("blob", bytes.Repeat([]byte("junk\n"), 1000))
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]gitrepo.Hash{"source commit": main, "blob": blob} {
		f.setRef(rsl.Ref, tip, target)
		f.mustFail(name, 64*mib, verify.ErrMalformed, target.String())
		f.setRef(rsl.Ref, target, tip)
	}
	// A log whose entry's parent is missing (a shallow or damaged copy).
	_, last := f.tip()
	msg := canonical(t, last.Number+1, main, tip) // the target is irrelevant: the parent is missing
	orphan := f.rawEntry("alice", []byte(msg), gitrepo.Hash{0xde, 0xad})
	f.setRef(rsl.Ref, tip, orphan)
	failed := f.mustFail("missing parent", 64*mib, verify.ErrMalformed, "dead")
	if failed != nil && !errors.Is(failed, verify.ErrMalformed) {
		t.Errorf("missing parent: %v", failed)
	}
	f.setRef(rsl.Ref, orphan, tip)
}
