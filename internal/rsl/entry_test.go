package rsl_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
)

// hx returns the hash made of 40 copies of the hex digit c.
func hx(c byte) gitrepo.Hash {
	h, err := gitrepo.ParseHash(strings.Repeat(string(c), 40))
	if err != nil {
		panic(err)
	}
	return h
}

var (
	zero40 = strings.Repeat("0", 40)
	a40    = strings.Repeat("a", 40)
	b40    = strings.Repeat("b", 40)
	c40    = strings.Repeat("c", 40)
)

// Canonical messages, written out by hand: they are the format of
// docs/format.md section 1 and must never change in version 1.
var (
	msgCreatePolicy = "rsl #1: create refs/secure/policy\n\nformat: git-secure-rsl/1\nnumber: 1\ntype: ref\nref: refs/secure/policy\nold: " + zero40 + "\nnew: " + a40 + "\n"
	msgUpdate       = "rsl #2: update refs/heads/main\n\nformat: git-secure-rsl/1\nnumber: 2\ntype: ref\nref: refs/heads/main\nold: " + a40 + "\nnew: " + b40 + "\n"
	msgDelete       = "rsl #17: delete refs/tags/v1.0\n\nformat: git-secure-rsl/1\nnumber: 17\ntype: ref\nref: refs/tags/v1.0\nold: " + c40 + "\nnew: " + zero40 + "\n"
	msgAnnotate     = "rsl #9: annotate\n\nformat: git-secure-rsl/1\nnumber: 9\ntype: annotation\nskip: 3 " + a40 + "\nskip: 7 " + b40 + "\nreason: pushed by mistake\n"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	longReason := strings.Repeat("é", rsl.MaxReasonLen/2) // exactly MaxReasonLen bytes
	var maxSkips []rsl.Skip
	for i := 1; i <= rsl.MaxSkips; i++ {
		maxSkips = append(maxSkips, rsl.Skip{Number: uint64(i), ID: hx("0123456789abcdef"[i%15+1])})
	}
	tests := []struct {
		name   string
		entry  rsl.Entry
		want   string // "" when not spelled out
		title  string
		policy bool
	}{
		{"create policy", rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: rsl.PolicyRef, New: hx('a')}, msgCreatePolicy, "rsl #1: create refs/secure/policy", true},
		{"update", rsl.Entry{Number: 2, Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hx('a'), New: hx('b')}, msgUpdate, "rsl #2: update refs/heads/main", false},
		{"delete", rsl.Entry{Number: 17, Type: rsl.TypeRef, Ref: "refs/tags/v1.0", Old: hx('c')}, msgDelete, "rsl #17: delete refs/tags/v1.0", false},
		{"update policy", rsl.Entry{Number: 5, Type: rsl.TypeRef, Ref: rsl.PolicyRef, Old: hx('a'), New: hx('b')}, "", "rsl #5: update refs/secure/policy", true},
		{"unicode ref", rsl.Entry{Number: 3, Type: rsl.TypeRef, Ref: "refs/heads/ünï/cödé", New: hx('d')}, "", "rsl #3: create refs/heads/ünï/cödé", false},
		{"large number", rsl.Entry{Number: rsl.MaxNumber, Type: rsl.TypeRef, Ref: "refs/heads/x", Old: hx('1'), New: hx('2')}, "", "rsl #1000000000000000: update refs/heads/x", false},
		{"annotation", rsl.Entry{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{3, hx('a')}, {7, hx('b')}}, Reason: "pushed by mistake"}, msgAnnotate, "rsl #9: annotate", false},
		{"annotation unicode reason", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{1, hx('f')}}, Reason: "revoked — key leaked ✓ (see #42)"}, "", "rsl #2: annotate", false},
		{"annotation longest reason", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{1, hx('f')}}, Reason: longReason}, "", "rsl #2: annotate", false},
		{"annotation max skips", rsl.Entry{Number: rsl.MaxSkips + 1, Type: rsl.TypeAnnotation, Skips: maxSkips, Reason: "x"}, "", fmt.Sprintf("rsl #%d: annotate", rsl.MaxSkips+1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.entry
			if got := e.Title(); got != tt.title {
				t.Errorf("Title() = %q, want %q", got, tt.title)
			}
			if got := e.IsPolicy(); got != tt.policy {
				t.Errorf("IsPolicy() = %v, want %v", got, tt.policy)
			}
			if err := e.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			msg, err := e.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if tt.want != "" && string(msg) != tt.want {
				t.Fatalf("Encode =\n%s\nwant\n%s", msg, tt.want)
			}
			if first, _, _ := strings.Cut(string(msg), "\n"); first != tt.title {
				t.Errorf("first line %q, want title %q", first, tt.title)
			}
			got, err := rsl.Decode(msg)
			if err != nil {
				t.Fatalf("Decode(Encode()): %v", err)
			}
			if !reflect.DeepEqual(*got, e) {
				t.Fatalf("Decode(Encode(e)) = %+v, want %+v", *got, e)
			}
			again, err := got.Encode()
			if err != nil || !bytes.Equal(again, msg) {
				t.Fatalf("re-encode = %q, %v", again, err)
			}
		})
	}
}

// TestEncodeDoesNotAlias checks that Decode's result does not share memory
// with the input and that Encode returns a fresh buffer each time.
func TestEncodeDoesNotAlias(t *testing.T) {
	in := []byte(msgAnnotate)
	e, err := rsl.Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 'x'
	}
	if e.Reason != "pushed by mistake" {
		t.Fatalf("decoded entry changed with its input: %q", e.Reason)
	}
	m1, _ := e.Encode()
	m2, _ := e.Encode()
	m1[0] = 'X'
	if m2[0] != 'r' {
		t.Fatal("Encode results share memory")
	}
}

// replace1 replaces exactly one occurrence of old in s, failing loudly
// when the test table is out of date.
func replace1(s, old, new string) string {
	if strings.Count(s, old) != 1 {
		panic(fmt.Sprintf("test table: %q occurs %d times", old, strings.Count(s, old)))
	}
	return strings.Replace(s, old, new, 1)
}

// annotation builds an annotation message with the given fields verbatim.
func annotation(number string, skips []string, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "rsl #%s: annotate\n\nformat: git-secure-rsl/1\nnumber: %s\ntype: annotation\n", number, number)
	for _, s := range skips {
		fmt.Fprintf(&b, "skip: %s\n", s)
	}
	fmt.Fprintf(&b, "reason: %s\n", reason)
	return b.String()
}

func refMsg(number, verb, ref, old, new string) string {
	return fmt.Sprintf("rsl #%s: %s %s\n\nformat: git-secure-rsl/1\nnumber: %s\ntype: ref\nref: %s\nold: %s\nnew: %s\n", number, verb, ref, number, ref, old, new)
}

func TestDecodeRejects(t *testing.T) {
	u := msgUpdate
	tooManySkips := make([]string, rsl.MaxSkips+1)
	for i := range tooManySkips {
		tooManySkips[i] = fmt.Sprintf("%d %s", i+1, a40)
	}
	tests := []struct {
		name string
		msg  string
	}{
		// Structure.
		{"empty", ""},
		{"only newline", "\n"},
		{"title only", "rsl #2: update refs/heads/main\n"},
		{"missing final newline", strings.TrimSuffix(u, "\n")},
		{"trailing blank line", u + "\n"},
		{"two trailing blank lines", u + "\n\n"},
		{"leading blank line", "\n" + u},
		{"no blank line after title", replace1(u, "main\n\n", "main\n")},
		{"two blank lines after title", replace1(u, "main\n\n", "main\n\n\n")},
		{"blank line between fields", replace1(u, "type: ref\n", "type: ref\n\n")},
		{"CRLF", strings.ReplaceAll(u, "\n", "\r\n")},
		{"CR at end of one field", replace1(u, "type: ref\n", "type: ref\r\n")},
		{"CR at end of title", replace1(u, "main\n\n", "main\r\n\n")},
		{"NUL in message", replace1(u, "type: ref", "type: ref\x00")},
		{"trailing space on field", replace1(u, "type: ref\n", "type: ref \n")},
		{"tab instead of space", replace1(u, "type: ref", "type:\tref")},
		{"no space after colon", replace1(u, "type: ref", "type:ref")},
		{"two spaces after colon", replace1(u, "type: ref", "type:  ref")},
		{"uppercase key", replace1(u, "type: ref", "Type: ref")},
		{"extra line", u + "extra: x\n"},
		{"extra unkeyed line", u + "x\n"},
		{"extra field in the middle", replace1(u, "type: ref\n", "type: ref\nsigner: me\n")},
		{"skip field in ref entry", u + "skip: 1 " + a40 + "\n"},
		{"reason field in ref entry", u + "reason: oops\n"},

		// Title.
		{"wrong verb", replace1(u, "rsl #2: update", "rsl #2: create")},
		{"wrong title number", replace1(u, "rsl #2:", "rsl #3:")},
		{"wrong title ref", replace1(u, "update refs/heads/main\n", "update refs/heads/other\n")},
		{"title trailing space", replace1(u, "main\n\n", "main \n\n")},
		{"title without hash sign", replace1(u, "rsl #2:", "rsl 2:")},
		{"title uppercase", replace1(u, "rsl #2", "RSL #2")},
		{"annotation title on ref entry", replace1(u, "rsl #2: update refs/heads/main", "rsl #2: annotate")},
		{"ref title on annotation", replace1(msgAnnotate, "rsl #9: annotate", "rsl #9: update refs/heads/main")},
		{"annotate with suffix", replace1(msgAnnotate, "rsl #9: annotate", "rsl #9: annotate refs/heads/main")},

		// Missing, duplicate and reordered fields.
		{"missing format", replace1(u, "format: git-secure-rsl/1\n", "")},
		{"missing number", replace1(u, "number: 2\n", "")},
		{"missing type", replace1(u, "type: ref\n", "")},
		{"missing ref", replace1(u, "ref: refs/heads/main\n", "")},
		{"missing old", replace1(u, "old: "+a40+"\n", "")},
		{"missing new", replace1(u, "new: "+b40+"\n", "")},
		{"missing reason", replace1(msgAnnotate, "reason: pushed by mistake\n", "")},
		{"missing skips", replace1(replace1(msgAnnotate, "skip: 3 "+a40+"\n", ""), "skip: 7 "+b40+"\n", "")},
		{"old and new swapped", replace1(u, "old: "+a40+"\nnew: "+b40+"\n", "new: "+b40+"\nold: "+a40+"\n")},
		{"format and number swapped", replace1(u, "format: git-secure-rsl/1\nnumber: 2\n", "number: 2\nformat: git-secure-rsl/1\n")},
		{"type after ref", replace1(u, "type: ref\nref: refs/heads/main\n", "ref: refs/heads/main\ntype: ref\n")},
		{"reason before skip", replace1(msgAnnotate, "skip: 7 "+b40+"\nreason: pushed by mistake\n", "reason: pushed by mistake\nskip: 7 "+b40+"\n")},
		{"duplicate format", replace1(u, "format: git-secure-rsl/1\n", "format: git-secure-rsl/1\nformat: git-secure-rsl/1\n")},
		{"duplicate number", replace1(u, "number: 2\n", "number: 2\nnumber: 2\n")},
		{"duplicate type", replace1(u, "type: ref\n", "type: ref\ntype: ref\n")},
		{"duplicate ref", replace1(u, "ref: refs/heads/main\n", "ref: refs/heads/main\nref: refs/heads/main\n")},
		{"duplicate old", replace1(u, "old: "+a40+"\n", "old: "+a40+"\nold: "+a40+"\n")},
		{"duplicate new", u + "new: " + b40 + "\n"},
		{"duplicate reason", msgAnnotate + "reason: pushed by mistake\n"},

		// Format version and type.
		{"format version 2", replace1(u, "git-secure-rsl/1", "git-secure-rsl/2")},
		{"format version 0", replace1(u, "git-secure-rsl/1", "git-secure-rsl/0")},
		{"format version 1.0", replace1(u, "git-secure-rsl/1", "git-secure-rsl/1.0")},
		{"format version 01", replace1(u, "git-secure-rsl/1", "git-secure-rsl/01")},
		{"other format", replace1(u, "git-secure-rsl/1", "gittuf-rsl/1")},
		{"empty format", replace1(u, "format: git-secure-rsl/1", "format: ")},
		{"unknown type", replace1(u, "type: ref", "type: tag")},
		{"type with other case", replace1(u, "type: ref", "type: Ref")},
		{"empty type", replace1(u, "type: ref", "type: ")},
		{"type annotation with ref fields", replace1(u, "type: ref", "type: annotation")},
		{"type ref with annotation fields", replace1(msgAnnotate, "type: annotation", "type: ref")},

		// Numbers.
		{"number 0", refMsg("0", "update", "refs/heads/main", a40, b40)},
		{"leading zero", refMsg("02", "update", "refs/heads/main", a40, b40)},
		{"leading zero in field only", replace1(u, "number: 2", "number: 02")},
		{"double zero", refMsg("00", "update", "refs/heads/main", a40, b40)},
		{"plus sign", refMsg("+2", "update", "refs/heads/main", a40, b40)},
		{"minus sign", refMsg("-2", "update", "refs/heads/main", a40, b40)},
		{"hex number", refMsg("0x2", "update", "refs/heads/main", a40, b40)},
		{"number with underscore", refMsg("1_0", "update", "refs/heads/main", a40, b40)},
		{"empty number", refMsg("", "update", "refs/heads/main", a40, b40)},
		{"fullwidth digit", refMsg("２", "update", "refs/heads/main", a40, b40)},
		{"number above MaxNumber", refMsg("1000000000000001", "update", "refs/heads/main", a40, b40)},
		{"number of 19 digits", refMsg("9999999999999999999", "update", "refs/heads/main", a40, b40)},
		{"skip above MaxNumber", annotation("1000000000000002", []string{"1000000000000001 " + a40}, "oops")},
		{"remote-tracking ref", refMsg("2", "update", "refs/remotes/origin/main", a40, b40)},
		{"refs/secure- prefix", refMsg("2", "update", "refs/secure-old/rsl", a40, b40)},
		{"number overflows uint64", refMsg("18446744073709551616", "update", "refs/heads/main", a40, b40)},
		{"number of 21 digits", refMsg("100000000000000000000", "update", "refs/heads/main", a40, b40)},

		// Hashes.
		{"uppercase hex old", refMsg("2", "update", "refs/heads/main", strings.ToUpper(a40), b40)},
		{"uppercase hex new", refMsg("2", "update", "refs/heads/main", a40, strings.ToUpper(b40))},
		{"mixed case hex", refMsg("2", "update", "refs/heads/main", "A"+a40[1:], b40)},
		{"short hash", refMsg("2", "update", "refs/heads/main", a40[:39], b40)},
		{"long hash", refMsg("2", "update", "refs/heads/main", a40+"a", b40)},
		{"sha256 hash", refMsg("2", "update", "refs/heads/main", strings.Repeat("a", 64), b40)},
		{"non-hex hash", refMsg("2", "update", "refs/heads/main", strings.Repeat("g", 40), b40)},
		{"abbreviated zero", refMsg("2", "create", "refs/heads/main", "0", b40)},
		{"old equals new", refMsg("2", "update", "refs/heads/main", a40, a40)},
		{"both zero", refMsg("2", "create", "refs/heads/main", zero40, zero40)},
		{"both zero as delete", refMsg("2", "delete", "refs/heads/main", zero40, zero40)},

		// Ref names.
		{"refs/secure/rsl", refMsg("2", "update", "refs/secure/rsl", a40, b40)},
		{"refs/secure/policy-staging", refMsg("2", "update", "refs/secure/policy-staging", a40, b40)},
		{"refs/secure/attestations", refMsg("2", "update", "refs/secure/attestations", a40, b40)},
		{"under refs/secure/policy", refMsg("2", "update", "refs/secure/policy/x", a40, b40)},
		{"short ref name", refMsg("2", "update", "main", a40, b40)},
		{"HEAD", refMsg("2", "update", "HEAD", a40, b40)},
		{"refs only", refMsg("2", "update", "refs/", a40, b40)},
		{"double dot", refMsg("2", "update", "refs/heads/a..b", a40, b40)},
		{"dot lock", refMsg("2", "update", "refs/heads/x.lock", a40, b40)},
		{"component starts with dot", refMsg("2", "update", "refs/heads/.hidden", a40, b40)},
		{"ends with dot", refMsg("2", "update", "refs/heads/x.", a40, b40)},
		{"ends with slash", refMsg("2", "update", "refs/heads/x/", a40, b40)},
		{"double slash", refMsg("2", "update", "refs/heads//x", a40, b40)},
		{"at brace", refMsg("2", "update", "refs/heads/x@{1}", a40, b40)},
		{"space", refMsg("2", "update", "refs/heads/a b", a40, b40)},
		{"tilde", refMsg("2", "update", "refs/heads/a~1", a40, b40)},
		{"caret", refMsg("2", "update", "refs/heads/a^", a40, b40)},
		{"colon", refMsg("2", "update", "refs/heads/a:b", a40, b40)},
		{"question mark", refMsg("2", "update", "refs/heads/a?", a40, b40)},
		{"star", refMsg("2", "update", "refs/heads/*", a40, b40)},
		{"bracket", refMsg("2", "update", "refs/heads/[a]", a40, b40)},
		{"backslash", refMsg("2", "update", `refs/heads/a\b`, a40, b40)},
		{"DEL", refMsg("2", "update", "refs/heads/a\x7f", a40, b40)},
		{"tab", refMsg("2", "update", "refs/heads/a\tb", a40, b40)},
		{"empty ref", refMsg("2", "update", "", a40, b40)},
		{"too long ref", refMsg("2", "update", "refs/heads/"+strings.Repeat("x", 1100), a40, b40)},

		// Annotations.
		{"reason tab", annotation("9", []string{"3 " + a40}, "a\tb")},
		{"reason control", annotation("9", []string{"3 " + a40}, "a\x01b")},
		{"reason ESC", annotation("9", []string{"3 " + a40}, "a\x1b[31mred")},
		{"reason DEL", annotation("9", []string{"3 " + a40}, "a\x7fb")},
		{"reason C1 control", annotation("9", []string{"3 " + a40}, "a\u0085b")},
		{"reason CSI", annotation("9", []string{"3 " + a40}, "a\u009bb")},
		{"reason line separator", annotation("9", []string{"3 " + a40}, "a\u2028b")},
		{"reason paragraph separator", annotation("9", []string{"3 " + a40}, "a\u2029b")},
		{"reason CR", annotation("9", []string{"3 " + a40}, "a\rb")},
		{"reason leading space", annotation("9", []string{"3 " + a40}, " oops")},
		{"reason trailing space", annotation("9", []string{"3 " + a40}, "oops ")},
		{"reason leading NBSP", annotation("9", []string{"3 " + a40}, "\u00a0oops")},
		{"reason only space", annotation("9", []string{"3 " + a40}, " ")},
		{"empty reason", annotation("9", []string{"3 " + a40}, "")},
		{"reason too long", annotation("9", []string{"3 " + a40}, strings.Repeat("x", rsl.MaxReasonLen+1))},
		{"reason too long multibyte", annotation("9", []string{"3 " + a40}, strings.Repeat("é", rsl.MaxReasonLen/2)+"x")},
		{"reason invalid UTF-8", annotation("9", []string{"3 " + a40}, "a\xffb")},
		{"reason overlong UTF-8", annotation("9", []string{"3 " + a40}, "a\xc0\xafb")},
		{"reason surrogate", annotation("9", []string{"3 " + a40}, "a\xed\xa0\x80b")},
		{"skips decreasing", annotation("9", []string{"7 " + a40, "3 " + b40}, "oops")},
		{"skips repeated", annotation("9", []string{"3 " + a40, "3 " + a40}, "oops")},
		{"skip equals own number", annotation("9", []string{"9 " + a40}, "oops")},
		{"skip after own number", annotation("9", []string{"3 " + a40, "10 " + b40}, "oops")},
		{"skip number 0", annotation("9", []string{"0 " + a40}, "oops")},
		{"skip leading zero", annotation("9", []string{"03 " + a40}, "oops")},
		{"skip negative", annotation("9", []string{"-3 " + a40}, "oops")},
		{"skip zero id", annotation("9", []string{"3 " + zero40}, "oops")},
		{"skip uppercase id", annotation("9", []string{"3 " + strings.ToUpper(a40)}, "oops")},
		{"skip short id", annotation("9", []string{"3 " + a40[:12]}, "oops")},
		{"skip without id", annotation("9", []string{"3"}, "oops")},
		{"skip without number", annotation("9", []string{a40}, "oops")},
		{"skip two spaces", annotation("9", []string{"3  " + a40}, "oops")},
		{"skip trailing text", annotation("9", []string{"3 " + a40 + " x"}, "oops")},
		{"skip id first", annotation("9", []string{a40 + " 3"}, "oops")},
		{"annotation number 1", annotation("1", []string{"1 " + a40}, "oops")},
		{"annotation with ref field", replace1(msgAnnotate, "type: annotation\n", "type: annotation\nref: refs/heads/main\n")},
		{"annotation with trailing ref field", msgAnnotate + "ref: refs/heads/main\n"},
		{"annotation with old field", replace1(msgAnnotate, "reason: pushed by mistake\n", "reason: pushed by mistake\nold: "+a40+"\n")},
		{"too many skips", annotation("2000", tooManySkips, "oops")},

		// Size.
		{"too large message", annotation("9", []string{"3 " + a40}, "oops") + strings.Repeat("x", rsl.MaxMessageSize)},
		{"too large reason padding", annotation("9", []string{"3 " + a40}, strings.Repeat("x", rsl.MaxMessageSize))},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		if seen[tt.name] {
			t.Fatalf("duplicate test name %q", tt.name)
		}
		seen[tt.name] = true
		t.Run(tt.name, func(t *testing.T) {
			e, err := rsl.Decode([]byte(tt.msg))
			if err == nil {
				t.Fatalf("Decode accepted %q as %+v", tt.msg, e)
			}
			if !errors.Is(err, rsl.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if e != nil {
				t.Fatalf("Decode returned an entry with an error: %+v", e)
			}
		})
	}
}

// TestDecodeSizeLimit checks that the size limit is checked first and
// reported as such.
func TestDecodeSizeLimit(t *testing.T) {
	// A canonical annotation cannot reach 64 KiB with small numbers, so pad
	// the reason past the reason limit: the size check must fire first and
	// still report ErrMalformed.
	big := annotation("9", []string{"3 " + a40}, strings.Repeat("x", rsl.MaxMessageSize+1))
	if _, err := rsl.Decode([]byte(big)); !errors.Is(err, rsl.ErrMalformed) || !strings.Contains(err.Error(), "larger") {
		t.Fatalf("Decode(%d bytes) = %v, want a size error", len(big), err)
	}
}

func TestEncodeRejects(t *testing.T) {
	tooMany := make([]rsl.Skip, rsl.MaxSkips+1)
	for i := range tooMany {
		tooMany[i] = rsl.Skip{Number: uint64(i + 1), ID: hx('a')}
	}
	one := []rsl.Skip{{1, hx('a')}}
	tests := []struct {
		name string
		e    rsl.Entry
	}{
		{"zero value", rsl.Entry{}},
		{"number 0", rsl.Entry{Type: rsl.TypeRef, Ref: "refs/heads/main", New: hx('a')}},
		{"unknown type", rsl.Entry{Number: 1, Type: "tag", Ref: "refs/heads/main", New: hx('a')}},
		{"empty type", rsl.Entry{Number: 1, Ref: "refs/heads/main", New: hx('a')}},
		{"invalid ref", rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: "main", New: hx('a')}},
		{"ref with newline", rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: "refs/heads/a\nnumber: 9", New: hx('a')}},
		{"secure ref", rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: rsl.Ref, New: hx('a')}},
		{"staging ref", rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: "refs/secure/policy-staging", New: hx('a')}},
		{"both zero", rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: "refs/heads/main"}},
		{"old equals new", rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hx('a'), New: hx('a')}},
		{"ref entry with skips", rsl.Entry{Number: 2, Type: rsl.TypeRef, Ref: "refs/heads/main", New: hx('a'), Skips: one}},
		{"ref entry with reason", rsl.Entry{Number: 2, Type: rsl.TypeRef, Ref: "refs/heads/main", New: hx('a'), Reason: "x"}},
		{"annotation with ref", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Ref: "refs/heads/main", Skips: one, Reason: "x"}},
		{"annotation with old", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Old: hx('a'), Skips: one, Reason: "x"}},
		{"annotation with new", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, New: hx('a'), Skips: one, Reason: "x"}},
		{"annotation without skips", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Reason: "x"}},
		{"annotation with too many skips", rsl.Entry{Number: rsl.MaxSkips + 5, Type: rsl.TypeAnnotation, Skips: tooMany, Reason: "x"}},
		{"skips not increasing", rsl.Entry{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{3, hx('a')}, {2, hx('b')}}, Reason: "x"}},
		{"skips repeated", rsl.Entry{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{3, hx('a')}, {3, hx('a')}}, Reason: "x"}},
		{"skip of itself", rsl.Entry{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{9, hx('a')}}, Reason: "x"}},
		{"skip of a later entry", rsl.Entry{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{10, hx('a')}}, Reason: "x"}},
		{"skip number 0", rsl.Entry{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{0, hx('a')}}, Reason: "x"}},
		{"skip zero id", rsl.Entry{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{1, gitrepo.ZeroHash}}, Reason: "x"}},
		{"empty reason", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: one}},
		{"reason with newline", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: one, Reason: "a\nnumber: 3"}},
		{"reason with leading space", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: one, Reason: " a"}},
		{"reason too long", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: one, Reason: strings.Repeat("a", rsl.MaxReasonLen+1)}},
		{"reason invalid UTF-8", rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: one, Reason: "\xff"}},
		{"number above MaxNumber", rsl.Entry{Number: rsl.MaxNumber + 1, Type: rsl.TypeRef, Ref: "refs/heads/main", New: hx('a')}},
		{"largest uint64", rsl.Entry{Number: 1<<64 - 1, Type: rsl.TypeRef, Ref: "refs/heads/main", New: hx('a')}},
		{"annotation above MaxNumber", rsl.Entry{Number: rsl.MaxNumber + 1, Type: rsl.TypeAnnotation, Skips: one, Reason: "x"}},
		{"remote-tracking ref", rsl.Entry{Number: 2, Type: rsl.TypeRef, Ref: "refs/remotes/origin/main", New: hx('a')}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := tt.e.Encode()
			if err == nil {
				t.Fatalf("Encode accepted %+v:\n%s", tt.e, msg)
			}
			if !errors.Is(err, rsl.ErrMalformed) {
				t.Fatalf("Encode error %v does not wrap ErrMalformed", err)
			}
			if msg != nil {
				t.Fatalf("Encode returned bytes with an error")
			}
			if err := tt.e.Validate(); !errors.Is(err, rsl.ErrMalformed) {
				t.Fatalf("Validate = %v, want ErrMalformed", err)
			}
		})
	}
}

// TestEncodeDecodeLargestNumbers: every entry Encode accepts is one Decode
// accepts, up to MaxNumber; above it both refuse.
func TestEncodeDecodeLargestNumbers(t *testing.T) {
	for _, n := range []uint64{rsl.MaxNumber - 1, rsl.MaxNumber} {
		e := rsl.Entry{Number: n, Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hx('a'), New: hx('b')}
		msg, err := e.Encode()
		if err != nil {
			t.Fatalf("Number %d: Encode: %v", n, err)
		}
		if got, err := rsl.Decode(msg); err != nil || got.Number != n {
			t.Fatalf("Number %d: Encode gave %q, Decode: %+v, %v", n, msg, got, err)
		}
	}
	for _, n := range []uint64{rsl.MaxNumber + 1, 9_999_999_999_999_999_999, 10_000_000_000_000_000_000, 1<<64 - 1} {
		e := rsl.Entry{Number: n, Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hx('a'), New: hx('b')}
		if msg, err := e.Encode(); err == nil {
			t.Errorf("Number %d: Encode accepted it: %q", n, msg)
		}
		num := fmt.Sprint(n)
		if _, err := rsl.Decode([]byte(refMsg(num, "update", "refs/heads/main", a40, b40))); !errors.Is(err, rsl.ErrMalformed) {
			t.Errorf("Number %d: Decode = %v, want ErrMalformed", n, err)
		}
	}
}

// TestLargestAnnotation: the largest annotation the limits allow (MaxSkips
// skips with MaxNumber-sized numbers, a reason of MaxReasonLen bytes) fits
// in MaxMessageSize and round-trips.
func TestLargestAnnotation(t *testing.T) {
	e := rsl.Entry{Number: rsl.MaxNumber, Type: rsl.TypeAnnotation, Reason: strings.Repeat("r", rsl.MaxReasonLen)}
	for i := uint64(0); i < rsl.MaxSkips; i++ {
		e.Skips = append(e.Skips, rsl.Skip{Number: rsl.MaxNumber - rsl.MaxSkips + i, ID: hx('e')})
	}
	msg, err := e.Encode()
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	if len(msg) > rsl.MaxMessageSize {
		t.Fatalf("%d bytes, more than MaxMessageSize", len(msg))
	}
	got, err := rsl.Decode(msg)
	if err != nil || !reflect.DeepEqual(*got, e) {
		t.Fatalf("Decode: %v", err)
	}
}

func TestValidateRecordedRef(t *testing.T) {
	for _, ok := range []string{"refs/heads/main", "refs/tags/v1.0", rsl.PolicyRef, "refs/notes/commits", "refs/heads/secure/x", "refs/securex/y", "refs/heads/ünï"} {
		if err := rsl.ValidateRecordedRef(ok); err != nil {
			t.Errorf("ValidateRecordedRef(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{rsl.Ref, "refs/secure/policy-staging", "refs/secure/attestations", "refs/secure/policy/x", "refs/secure/x",
		"refs/secure-backup/rsl", "refs/remotes/origin/main", "refs/remotes/origin/HEAD", "HEAD", "main", "refs/heads/a..b", ""} {
		if err := rsl.ValidateRecordedRef(bad); err == nil {
			t.Errorf("ValidateRecordedRef(%q) accepted", bad)
		}
	}
}

// fakeSig is an armored signature FromCommit accepts: it checks presence,
// not validity.
const fakeSig = "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==\n-----END SSH SIGNATURE-----\n"

var testWho = gitrepo.Ident{Name: "Test Signer", Email: "signer@example.com", When: time.Unix(1_700_000_000, 0).UTC()}

// commitOf builds a parsed commit with the given tree, parents, message and
// (optional) signature, as gitrepo would read it.
func commitOf(t testing.TB, tree gitrepo.Hash, parents []gitrepo.Hash, msg string, sig string) *gitrepo.Commit {
	t.Helper()
	raw := gitrepo.EncodeCommit(tree, parents, testWho, testWho, msg)
	if sig != "" {
		var err error
		if raw, err = gitrepo.AddSignature(raw, []byte(sig)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := gitrepo.ParseCommit(raw)
	if err != nil {
		t.Fatal(err)
	}
	c.Hash = hashCommit(raw)
	return c
}

func emptyTree() gitrepo.Hash {
	h, err := gitrepo.ParseHash(gitrepo.EmptyTreeHash)
	if err != nil {
		panic(err)
	}
	return h
}

func TestFromCommit(t *testing.T) {
	e1 := rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: rsl.PolicyRef, New: hx('a')}
	e2 := rsl.Entry{Number: 2, Type: rsl.TypeRef, Ref: "refs/heads/main", New: hx('b')}
	enc := func(e rsl.Entry) string {
		m, err := e.Encode()
		if err != nil {
			t.Fatal(err)
		}
		return string(m)
	}
	empty := emptyTree()
	parent := hx('1')
	tests := []struct {
		name    string
		c       *gitrepo.Commit
		want    *rsl.Entry
		wantErr error
	}{
		{"entry 1", commitOf(t, empty, nil, enc(e1), fakeSig), &e1, nil},
		{"entry 2", commitOf(t, empty, []gitrepo.Hash{parent}, enc(e2), fakeSig), &e2, nil},
		{"non-empty tree", commitOf(t, hx('2'), []gitrepo.Hash{parent}, enc(e2), fakeSig), nil, rsl.ErrNotEntry},
		{"zero tree", commitOf(t, gitrepo.ZeroHash, []gitrepo.Hash{parent}, enc(e2), fakeSig), nil, rsl.ErrNotEntry},
		{"two parents", commitOf(t, empty, []gitrepo.Hash{parent, hx('3')}, enc(e2), fakeSig), nil, rsl.ErrNotEntry},
		{"two parents on entry 1", commitOf(t, empty, []gitrepo.Hash{parent, hx('3')}, enc(e1), fakeSig), nil, rsl.ErrNotEntry},
		{"unsigned", commitOf(t, empty, []gitrepo.Hash{parent}, enc(e2), ""), nil, rsl.ErrNotEntry},
		{"unsigned entry 1", commitOf(t, empty, nil, enc(e1), ""), nil, rsl.ErrNotEntry},
		{"entry 1 with a parent", commitOf(t, empty, []gitrepo.Hash{parent}, enc(e1), fakeSig), nil, rsl.ErrNotEntry},
		{"entry 2 without a parent", commitOf(t, empty, nil, enc(e2), fakeSig), nil, rsl.ErrNotEntry},
		{"malformed message", commitOf(t, empty, []gitrepo.Hash{parent}, enc(e2)+"\n", fakeSig), nil, rsl.ErrMalformed},
		{"source commit message", commitOf(t, empty, []gitrepo.Hash{parent}, "fix the build\n", fakeSig), nil, rsl.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rsl.FromCommit(tt.c)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("FromCommit = %+v, %v; want error %v", got, err, tt.wantErr)
				}
				if got != nil {
					t.Fatal("entry returned with an error")
				}
				if !strings.Contains(err.Error(), tt.c.Hash.String()) {
					t.Errorf("error %q does not name the commit %s", err, tt.c.Hash)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromCommit: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("FromCommit = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPayload(t *testing.T) {
	e := &rsl.Entry{Number: 2, Type: rsl.TypeRef, Ref: "refs/heads/main", Old: hx('a'), New: hx('b')}
	for _, parent := range []gitrepo.Hash{gitrepo.ZeroHash, hx('c')} {
		p, err := rsl.Payload(e, parent, testWho)
		if err != nil {
			t.Fatal(err)
		}
		c, err := gitrepo.ParseCommit(p)
		if err != nil {
			t.Fatal(err)
		}
		if c.Tree != emptyTree() || c.Message != msgUpdate || c.Signature != nil {
			t.Fatalf("payload %q", p)
		}
		if wantParents := !parent.IsZero(); (len(c.Parents) == 1) != wantParents || (wantParents && c.Parents[0] != parent) {
			t.Fatalf("parent %s: payload parents %v", parent, c.Parents)
		}
		if !c.Author.When.Equal(testWho.When) || c.Author.Name != testWho.Name || c.Committer.Email != testWho.Email {
			t.Fatalf("idents %+v %+v", c.Author, c.Committer)
		}
	}
	if _, err := rsl.Payload(&rsl.Entry{Number: 2, Type: rsl.TypeRef, Ref: "main", New: hx('a')}, gitrepo.ZeroHash, testWho); !errors.Is(err, rsl.ErrMalformed) {
		t.Fatalf("Payload of an invalid entry: %v", err)
	}
}

// fuzzSeeds are valid messages plus near misses; testdata/valid holds more.
func fuzzSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{
		[]byte(msgCreatePolicy), []byte(msgUpdate), []byte(msgDelete), []byte(msgAnnotate),
		[]byte(strings.ReplaceAll(msgUpdate, "\n", "\r\n")),
		[]byte(msgUpdate + "\n"),
		[]byte(refMsg("02", "update", "refs/heads/main", a40, b40)),
		[]byte(annotation("9", []string{"3 " + a40, "3 " + a40}, "oops")),
		[]byte(annotation("9", []string{"3 " + a40}, " oops")),
	}
	files, err := filepath.Glob(filepath.Join("testdata", "valid", "*.msg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	return seeds
}

// TestValidTestdata decodes every stored valid message: they are
// canonical entries of format version 1 and must stay readable.
func TestValidTestdata(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "valid", "*.msg"))
	if len(files) == 0 {
		t.Fatal("no testdata/valid/*.msg")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		e, err := rsl.Decode(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if again, _ := e.Encode(); !bytes.Equal(again, b) {
			t.Errorf("%s: re-encodes differently", f)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		in := bytes.Clone(msg)
		e, err := rsl.Decode(msg)
		if !bytes.Equal(in, msg) {
			t.Fatal("Decode modified its input")
		}
		if err != nil {
			if !errors.Is(err, rsl.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			if e != nil {
				t.Fatal("entry returned with an error")
			}
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("decoded entry does not validate: %v", err)
		}
		again, err := e.Encode()
		if err != nil {
			t.Fatalf("Encode of a decoded entry: %v", err)
		}
		if !bytes.Equal(again, msg) {
			t.Fatalf("Decode accepted %q but Encode gives %q", msg, again)
		}
		if first, _, _ := strings.Cut(string(msg), "\n"); first != e.Title() {
			t.Fatalf("title %q, fields say %q", first, e.Title())
		}
		if len(msg) > rsl.MaxMessageSize || bytes.ContainsAny(msg, "\r\x00") || bytes.HasSuffix(msg, []byte("\n\n")) {
			t.Fatalf("accepted a message that breaks the format rules: %q", msg)
		}
	})
}

// FuzzEntryRoundTrip builds entries from fuzzed fields: whatever Encode
// accepts, Decode must give back unchanged.
func FuzzEntryRoundTrip(f *testing.F) {
	f.Add(uint64(2), false, "refs/heads/main", []byte(hx('a').String()), []byte(hx('b').String()), uint64(1), "oops")
	f.Add(uint64(1), false, rsl.PolicyRef, []byte{}, []byte(hx('a').String()), uint64(0), "")
	f.Add(uint64(9), true, "", []byte{}, []byte{}, uint64(3), "pushed by mistake")
	f.Add(uint64(9), true, "", []byte{}, []byte{}, uint64(9), " lead")
	f.Fuzz(func(t *testing.T, number uint64, isAnnotation bool, ref string, old, new []byte, skip uint64, reason string) {
		toHash := func(b []byte) gitrepo.Hash {
			var h gitrepo.Hash
			copy(h[:], b)
			return h
		}
		e := rsl.Entry{Number: number, Type: rsl.TypeRef, Ref: ref, Old: toHash(old), New: toHash(new)}
		if isAnnotation {
			e = rsl.Entry{Number: number, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{skip, toHash(old)}, {skip + 1, toHash(new)}}, Reason: reason}
		}
		msg, err := e.Encode()
		if err != nil {
			if !errors.Is(err, rsl.ErrMalformed) {
				t.Fatalf("Encode error %v does not wrap ErrMalformed", err)
			}
			return
		}
		got, err := rsl.Decode(msg)
		if err != nil {
			t.Fatalf("Encode gave %q, Decode refuses it: %v", msg, err)
		}
		if !reflect.DeepEqual(*got, e) {
			t.Fatalf("round trip changed the entry: %+v -> %+v", e, *got)
		}
	})
}

// TestReasonPrintable: docs/format.md allows "one line of printable UTF-8"
// as a reason. Format characters (bidi overrides, zero-width characters,
// BOM) are not printable; a bidi override in a reason makes `git secure
// log` show a different text than the one signed (Trojan Source).
func TestReasonPrintable(t *testing.T) {
	for _, r := range []string{"revoked \u202eexe.txt", "a\u2066b\u2069", "zero\u200bwidth", "bom\ufeff", "a\u061cb"} {
		e := rsl.Entry{Number: 2, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{1, hx('a')}}, Reason: r}
		if _, err := e.Encode(); err == nil {
			t.Errorf("reason %+q accepted", r)
		}
		if _, err := rsl.Decode([]byte(annotation("2", []string{"1 " + a40}, r))); err == nil {
			t.Errorf("Decode accepted reason %+q", r)
		}
	}
}
