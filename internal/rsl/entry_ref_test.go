package rsl

// The entry codec as it was before it was rewritten to append into
// buffers instead of formatting with fmt and splitting with strings.Split:
// the reference FuzzDecodeMatchesReference holds the new one to. It
// repeats the production codec's shape on purpose and shares no code with
// it: a bug in shared code would be on both sides of the comparison.

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// refTitle is Title as it was.
func (e *Entry) refTitle() string {
	switch e.Type {
	case TypeRef:
		verb := "update"
		switch {
		case e.Old.IsZero():
			verb = "create"
		case e.New.IsZero():
			verb = "delete"
		}
		return fmt.Sprintf("rsl #%d: %s %s", e.Number, verb, e.Ref)
	case TypeAnnotation:
		return fmt.Sprintf("rsl #%d: annotate", e.Number)
	}
	return fmt.Sprintf("rsl #%d: %s", e.Number, e.Type)
}

// refEncode is Encode as it was.
func (e *Entry) refEncode() ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\nformat: %s\nnumber: %d\ntype: %s\n", e.refTitle(), Format, e.Number, e.Type)
	switch e.Type {
	case TypeRef:
		fmt.Fprintf(&b, "ref: %s\nold: %s\nnew: %s\n", e.Ref, e.Old, e.New)
	case TypeAnnotation:
		for _, s := range e.Skips {
			fmt.Fprintf(&b, "skip: %d %s\n", s.Number, s.ID)
		}
		fmt.Fprintf(&b, "reason: %s\n", e.Reason)
	}
	if e.Org != nil {
		fmt.Fprintf(&b, "org: %s\n", e.Org)
	}
	if b.Len() > MaxMessageSize {
		return nil, fmt.Errorf("%w: message larger than %d bytes", ErrMalformed, MaxMessageSize)
	}
	return b.Bytes(), nil
}

// refDecode is Decode as it was.
func refDecode(msg []byte) (*Entry, error) {
	if len(msg) > MaxMessageSize {
		return nil, fmt.Errorf("%w: message larger than %d bytes", ErrMalformed, MaxMessageSize)
	}
	if !bytes.HasSuffix(msg, []byte("\n")) {
		return nil, fmt.Errorf("%w: message does not end in a newline", ErrMalformed)
	}
	lines := strings.Split(string(msg[:len(msg)-1]), "\n")
	if len(lines) < 6 || lines[1] != "" {
		return nil, fmt.Errorf("%w: missing title or fields", ErrMalformed)
	}
	p := fieldParser{lines: lines[2:], err: new(error)}
	e := &Entry{}
	if v := p.next("format"); v != Format {
		if *p.err != nil {
			return nil, *p.err
		}
		return nil, fmt.Errorf("%w: unsupported format %q (this version reads %s)", ErrMalformed, v, Format)
	}
	e.Number = p.number("number")
	e.Type = Type(p.next("type"))
	switch e.Type {
	case TypeRef:
		e.Ref = p.next("ref")
		e.Old = p.hash("old")
		e.New = p.hash("new")
	case TypeAnnotation:
		for *p.err == nil && p.peek("skip") {
			v := p.next("skip")
			num, id, ok := strings.Cut(v, " ")
			if !ok {
				p.fail("skip must be \"<number> <entry-id>\"")
				break
			}
			n, err := parseNumber(num)
			if err != nil {
				p.fail("skip number: " + err.Error())
				break
			}
			h, err := gitrepo.ParseHash(id)
			if err != nil {
				p.fail("skip id: " + err.Error())
				break
			}
			if len(e.Skips) >= MaxSkips {
				p.fail("too many skips")
				break
			}
			e.Skips = append(e.Skips, Skip{Number: n, ID: h})
		}
		e.Reason = p.next("reason")
	default:
		if *p.err == nil {
			return nil, fmt.Errorf("%w: unknown type %q", ErrMalformed, e.Type)
		}
	}
	if *p.err == nil && p.peek("org") {
		e.Org = p.org()
	}
	if *p.err != nil {
		return nil, *p.err
	}
	if len(p.lines) != 0 {
		return nil, fmt.Errorf("%w: unexpected line %q", ErrMalformed, truncate(p.lines[0]))
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	if lines[0] != e.refTitle() {
		return nil, fmt.Errorf("%w: title %q does not match fields (want %q)", ErrMalformed, truncate(lines[0]), e.refTitle())
	}
	// Canonical: re-encoding must give the same bytes.
	again, err := e.refEncode()
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(again, msg) {
		return nil, fmt.Errorf("%w: message is not in canonical form", ErrMalformed)
	}
	return e, nil
}

// refFromCommit is FromCommit as it was.
func refFromCommit(c *gitrepo.Commit) (*Entry, error) {
	if c.Tree.String() != gitrepo.EmptyTreeHash {
		return nil, fmt.Errorf("%w %s: tree is not empty", ErrNotEntry, c.Hash)
	}
	if len(c.Parents) > 1 {
		return nil, fmt.Errorf("%w %s: %d parents", ErrNotEntry, c.Hash, len(c.Parents))
	}
	if len(c.Signature) == 0 {
		return nil, fmt.Errorf("%w %s: unsigned", ErrNotEntry, c.Hash)
	}
	e, err := refDecode([]byte(c.Message))
	if err != nil {
		return nil, fmt.Errorf("entry %s: %w", c.Hash, err)
	}
	if (e.Number == 1) != (len(c.Parents) == 0) {
		return nil, fmt.Errorf("%w %s: entry #%d has %d parents", ErrNotEntry, c.Hash, e.Number, len(c.Parents))
	}
	return e, nil
}

// FuzzDecodeMatchesReference: Decode and Encode agree with the codec they
// replaced on every message: the same entry or the same error, the same
// bytes and title.
func FuzzDecodeMatchesReference(f *testing.F) {
	h := func(c byte) string { return strings.Repeat(string(c), 40) }
	for _, m := range []string{
		"rsl #1: create refs/secure/policy\n\nformat: git-secure-rsl/1\nnumber: 1\ntype: ref\nref: refs/secure/policy\nold: " + h('0') + "\nnew: " + h('a') + "\n",
		"rsl #2: update refs/heads/main\n\nformat: git-secure-rsl/1\nnumber: 2\ntype: ref\nref: refs/heads/main\nold: " + h('b') + "\nnew: " + h('a') + "\norg: 3 " + h('c') + "\n",
		"rsl #9: annotate\n\nformat: git-secure-rsl/1\nnumber: 9\ntype: annotation\nskip: 3 " + h('d') + "\nskip: 4 " + h('e') + "\nreason: pushed by mistake\n",
		"rsl #9: x\n\nformat: git-secure-rsl/1\nnumber: 9\ntype: x\n\n\n",
		"rsl #1: create refs/heads/a\n\nformat: git-secure-rsl/1\nnumber: 01\ntype: ref\nref: refs/heads/a\nold: " + h('0') + "\nnew: " + h('a') + "\n",
	} {
		f.Add([]byte(m))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		want, wantErr := refDecode(msg)
		got, err := Decode(msg)
		if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("Decode: %v; the reference: %v", err, wantErr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Decode = %+v; the reference %+v", got, want)
		}
		enc, err := got.Encode()
		refEnc, refErr := got.refEncode()
		if err != nil || refErr != nil || !bytes.Equal(enc, refEnc) || got.Title() != got.refTitle() {
			t.Fatalf("Encode = %q, %v; the reference %q, %v", enc, err, refEnc, refErr)
		}
		// Entries that do not decode still encode and title alike.
		if e := (&Entry{Number: got.Number, Type: Type(string(msg[:min(len(msg), 9)])), Ref: got.Ref}); e.Title() != e.refTitle() {
			t.Fatalf("Title %q; the reference %q", e.Title(), e.refTitle())
		}
	})
}
