// Package rsl holds the Reference State Log's entry format: pure types that
// encode and decode the message of an RSL entry commit, canonically and
// strictly. It does no I/O, checks no signature and trusts nothing: deciding
// whether an entry counts is internal/verify's job. Safe for concurrent use.
package rsl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// Ref is the ref that holds the log.
const Ref = "refs/secure/rsl"

// KeepRefPrefix names the refs that keep a recorded state a force-push
// left behind reachable: refs/secure/keep/<full hash> points at that
// commit, so fresh clones can diff the next entry from it exactly. They
// are only ever created, never moved, and are trusted for nothing but the
// objects they bring.
const KeepRefPrefix = "refs/secure/keep/"

// KeepRef is the keep ref of state h.
func KeepRef(h gitrepo.Hash) string { return KeepRefPrefix + h.String() }

// PolicyRef is the ref whose changes the log records as policy changes.
const PolicyRef = "refs/secure/policy"

// Format is the format line every entry carries.
const Format = "git-secure-rsl/1"

// MaxMessageSize bounds an entry's message.
const MaxMessageSize = 64 << 10

// MaxNumber bounds entry numbers (so that every number encodes in at most
// 16 digits).
const MaxNumber = 1e15

// MaxSkips bounds the entries one annotation may skip.
const MaxSkips = 1000

// MaxReasonLen bounds an annotation's reason.
const MaxReasonLen = 1000

// Type is an entry's kind.
type Type string

const (
	// TypeRef records that a ref moved from Old to New.
	TypeRef Type = "ref"
	// TypeAnnotation marks earlier entries as skipped.
	TypeAnnotation Type = "annotation"
)

// ErrMalformed is wrapped by every decoding error.
var ErrMalformed = errors.New("rsl: malformed entry")

// Skip names one earlier entry an annotation skips.
type Skip struct {
	Number uint64
	ID     gitrepo.Hash
}

// Entry is the decoded message of one RSL entry.
type Entry struct {
	Number uint64
	Type   Type

	// TypeRef fields.
	Ref string
	Old gitrepo.Hash
	New gitrepo.Hash

	// TypeAnnotation fields.
	Skips  []Skip
	Reason string

	// Org, on an entry of a repository whose policy inherits an
	// organisation policy, names the organisation policy version the
	// entry is judged under (internal/org). Never on a policy entry.
	Org *OrgVersion
}

// OrgVersion names one version of an organisation policy: the entry of
// the organisation policy repository's log that recorded it.
type OrgVersion struct {
	Number uint64
	ID     gitrepo.Hash
}

func (o OrgVersion) String() string { return fmt.Sprintf("%d %s", o.Number, o.ID) }

// IsPolicy reports whether e records a policy change.
func (e *Entry) IsPolicy() bool { return e.Type == TypeRef && e.Ref == PolicyRef }

// Title is the first line of the entry's message.
func (e *Entry) Title() string {
	var buf [128]byte
	return string(e.appendTitle(buf[:0]))
}

// appendTitle appends the title: "rsl #N: create|update|delete REF",
// "rsl #N: annotate", or "rsl #N: TYPE" for a type this version does not
// know.
func (e *Entry) appendTitle(b []byte) []byte {
	b = strconv.AppendUint(append(b, "rsl #"...), e.Number, 10)
	switch e.Type {
	case TypeRef:
		verb := ": update "
		switch {
		case e.Old.IsZero():
			verb = ": create "
		case e.New.IsZero():
			verb = ": delete "
		}
		return append(append(b, verb...), e.Ref...)
	case TypeAnnotation:
		return append(b, ": annotate"...)
	}
	return append(append(b, ": "...), e.Type...)
}

// Validate checks the fields of e without reference to other entries.
func (e *Entry) Validate() error {
	if e.Number < 1 || e.Number > MaxNumber {
		return fmt.Errorf("%w: number must be from 1 to %d", ErrMalformed, uint64(MaxNumber))
	}
	switch e.Type {
	case TypeRef:
		if err := ValidateRecordedRef(e.Ref); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if e.Old.IsZero() && e.New.IsZero() {
			return fmt.Errorf("%w: old and new are both zero", ErrMalformed)
		}
		if e.Old == e.New {
			return fmt.Errorf("%w: old and new are equal", ErrMalformed)
		}
		if len(e.Skips) != 0 || e.Reason != "" {
			return fmt.Errorf("%w: annotation fields in a ref entry", ErrMalformed)
		}
	case TypeAnnotation:
		if e.Ref != "" || !e.Old.IsZero() || !e.New.IsZero() {
			return fmt.Errorf("%w: ref fields in an annotation", ErrMalformed)
		}
		if len(e.Skips) == 0 || len(e.Skips) > MaxSkips {
			return fmt.Errorf("%w: an annotation skips 1 to %d entries, not %d", ErrMalformed, MaxSkips, len(e.Skips))
		}
		var last uint64
		for _, s := range e.Skips {
			if s.Number <= last || s.Number >= e.Number || s.ID.IsZero() {
				return fmt.Errorf("%w: skipped entries must be earlier entries in increasing order", ErrMalformed)
			}
			last = s.Number
		}
		if err := validReason(e.Reason); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: unknown type %q", ErrMalformed, e.Type)
	}
	return e.validateOrg()
}

func (e *Entry) validateOrg() error {
	if e.Org == nil {
		return nil
	}
	if e.IsPolicy() {
		return fmt.Errorf("%w: a policy entry names no organisation policy version", ErrMalformed)
	}
	if e.Org.Number < 1 || e.Org.Number > MaxNumber || e.Org.ID.IsZero() {
		return fmt.Errorf("%w: org must name an entry number from 1 to %d and its non-zero ID", ErrMalformed, uint64(MaxNumber))
	}
	return nil
}

func validReason(r string) error {
	if r == "" || len(r) > MaxReasonLen || !utf8.ValidString(r) {
		return fmt.Errorf("%w: reason must be 1 to %d bytes of UTF-8", ErrMalformed, MaxReasonLen)
	}
	for _, c := range r {
		// Printable only: no controls, and no format characters such as
		// bidi overrides that make the log display other text than signed.
		if !unicode.IsPrint(c) || unicode.Is(unicode.Cf, c) {
			return fmt.Errorf("%w: reason contains a control or format character (%U)", ErrMalformed, c)
		}
	}
	if strings.TrimSpace(r) != r {
		return fmt.Errorf("%w: reason has leading or trailing space", ErrMalformed)
	}
	return nil
}

// ValidateRecordedRef checks that name is a ref the log may record: a valid
// full ref name outside refs/secure/, or the policy ref itself.
func ValidateRecordedRef(name string) error {
	if err := gitrepo.ValidRefName(name); err != nil {
		return err
	}
	if (strings.HasPrefix(name, "refs/secure/") || strings.HasPrefix(name, "refs/secure-")) && name != PolicyRef {
		return fmt.Errorf("ref %s is git-secure's own metadata and is not recorded", name)
	}
	if strings.HasPrefix(name, "refs/remotes/") {
		return fmt.Errorf("ref %s is a remote-tracking ref, a clone's private view; record the branch itself", name)
	}
	return nil
}

// Encode returns the canonical message of e. It fails if e is invalid.
func (e *Entry) Encode() ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	b := e.appendMessage(make([]byte, 0, 256+len(e.Ref)+len(e.Reason)+64*len(e.Skips)))
	if len(b) > MaxMessageSize {
		return nil, fmt.Errorf("%w: message larger than %d bytes", ErrMalformed, MaxMessageSize)
	}
	return b, nil
}

// appendMessage appends the message of e, which must be valid: the
// title, a blank line and one "key: value" line per field.
func (e *Entry) appendMessage(b []byte) []byte {
	b = e.appendTitle(b)
	b = strconv.AppendUint(append(b, "\n\nformat: "+Format+"\nnumber: "...), e.Number, 10)
	b = append(append(append(b, "\ntype: "...), e.Type...), '\n')
	switch e.Type {
	case TypeRef:
		b = append(append(append(b, "ref: "...), e.Ref...), "\nold: "...)
		b = append(e.Old.AppendHex(b), "\nnew: "...)
		b = append(e.New.AppendHex(b), '\n')
	case TypeAnnotation:
		for _, s := range e.Skips {
			b = append(strconv.AppendUint(append(b, "skip: "...), s.Number, 10), ' ')
			b = append(s.ID.AppendHex(b), '\n')
		}
		b = append(append(append(b, "reason: "...), e.Reason...), '\n')
	}
	if e.Org != nil {
		b = append(strconv.AppendUint(append(b, "org: "...), e.Org.Number, 10), ' ')
		b = append(e.Org.ID.AppendHex(b), '\n')
	}
	return b
}

// Decode parses an entry's commit message strictly: it must be exactly what
// Encode produces for the fields it holds.
func Decode(msg []byte) (*Entry, error) {
	// The bound comes before the copy into a string: a hostile 50 MB
	// message must not cost 50 MB to refuse (TestHugeEntryMessage).
	if len(msg) > MaxMessageSize {
		return nil, fmt.Errorf("%w: message larger than %d bytes", ErrMalformed, MaxMessageSize)
	}
	return decode(string(msg))
}

// maxFieldLines is how many lines of a message decode splits without
// allocating: the title, the blank line and the fields of a ref entry
// with an org line fit.
const maxFieldLines = 12

// skips reads an annotation's "skip <number> <entry-id>" lines into e.
func (p *fieldParser) skips(e *Entry) {
	for *p.err == nil && p.peek("skip") {
		v := p.next("skip")
		num, id, ok := strings.Cut(v, " ")
		if !ok {
			p.fail("skip must be \"<number> <entry-id>\"")
			return
		}
		n, err := parseNumber(num)
		if err != nil {
			p.fail("skip number: " + err.Error())
			return
		}
		h, err := gitrepo.ParseHash(id)
		if err != nil {
			p.fail("skip id: " + err.Error())
			return
		}
		if len(e.Skips) >= MaxSkips {
			p.fail("too many skips")
			return
		}
		e.Skips = append(e.Skips, Skip{Number: n, ID: h})
	}
}

// decode is Decode of a message held in a string (an entry's fields are
// substrings of it).
func decode(msg string) (*Entry, error) {
	if len(msg) > MaxMessageSize {
		return nil, fmt.Errorf("%w: message larger than %d bytes", ErrMalformed, MaxMessageSize)
	}
	if !strings.HasSuffix(msg, "\n") {
		return nil, fmt.Errorf("%w: message does not end in a newline", ErrMalformed)
	}
	var buf [maxFieldLines]string
	lines := splitLines(buf[:0], msg[:len(msg)-1])
	if len(lines) < 6 || lines[1] != "" {
		return nil, fmt.Errorf("%w: missing title or fields", ErrMalformed)
	}
	// The error lives outside p: Go's escape analysis would otherwise let
	// returning it move the line array to the heap.
	var perr error
	p := fieldParser{lines: lines[2:], err: &perr}
	e := &Entry{}
	if v := p.next("format"); v != Format {
		if perr != nil {
			return nil, perr
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
		p.skips(e)
		e.Reason = p.next("reason")
	default:
		if perr == nil {
			return nil, fmt.Errorf("%w: unknown type %q", ErrMalformed, e.Type)
		}
	}
	if perr == nil && p.peek("org") {
		e.Org = p.org()
	}
	if perr != nil {
		return nil, perr
	}
	if len(p.lines) != 0 {
		return nil, fmt.Errorf("%w: unexpected line %q", ErrMalformed, truncate(p.lines[0]))
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	var enc [512]byte
	if string(e.appendTitle(enc[:0])) != lines[0] {
		return nil, fmt.Errorf("%w: title %q does not match fields (want %q)", ErrMalformed, truncate(lines[0]), e.Title())
	}
	// Canonical: re-encoding must give the same bytes.
	if string(e.appendMessage(enc[:0])) != msg {
		return nil, fmt.Errorf("%w: message is not in canonical form", ErrMalformed)
	}
	return e, nil
}

// splitLines appends the lines of s (split at every '\n', as
// strings.Split splits) to lines.
func splitLines(lines []string, s string) []string {
	for {
		line, rest, found := strings.Cut(s, "\n")
		lines = append(lines, line)
		if !found {
			return lines
		}
		s = rest
	}
}

type fieldParser struct {
	lines []string
	err   *error // the first failure
}

func (p *fieldParser) fail(msg string) {
	if *p.err == nil {
		*p.err = fmt.Errorf("%w: %s", ErrMalformed, msg)
	}
}

func (p *fieldParser) peek(key string) bool {
	return len(p.lines) > 0 && strings.HasPrefix(p.lines[0], key+": ")
}

func (p *fieldParser) next(key string) string {
	if *p.err != nil {
		return ""
	}
	if len(p.lines) == 0 {
		p.fail("missing field " + key)
		return ""
	}
	line := p.lines[0]
	v, ok := strings.CutPrefix(line, key+": ")
	if !ok {
		p.fail(fmt.Sprintf("expected field %s, got %q", key, truncate(line)))
		return ""
	}
	p.lines = p.lines[1:]
	return v
}

func (p *fieldParser) hash(key string) gitrepo.Hash {
	v := p.next(key)
	if *p.err != nil {
		return gitrepo.ZeroHash
	}
	h, err := gitrepo.ParseHash(v)
	if err != nil {
		p.fail(key + ": " + err.Error())
	}
	return h
}

func (p *fieldParser) number(key string) uint64 {
	v := p.next(key)
	if *p.err != nil {
		return 0
	}
	n, err := parseNumber(v)
	if err != nil {
		p.fail(key + ": " + err.Error())
	}
	return n
}

// org parses "org: <number> <entry-id>".
func (p *fieldParser) org() *OrgVersion {
	v := p.next("org")
	num, id, ok := strings.Cut(v, " ")
	if !ok {
		p.fail("org must be \"<number> <entry-id>\"")
		return nil
	}
	n, err := parseNumber(num)
	if err != nil {
		p.fail("org number: " + err.Error())
		return nil
	}
	h, err := gitrepo.ParseHash(id)
	if err != nil {
		p.fail("org id: " + err.Error())
		return nil
	}
	return &OrgVersion{Number: n, ID: h}
}

// parseNumber accepts only canonical decimal: no sign, no leading zeros.
func parseNumber(s string) (uint64, error) {
	if s == "" || len(s) > 19 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("not a canonical number: %q", truncate(s))
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("not a canonical number: %q", truncate(s))
		}
	}
	return strconv.ParseUint(s, 10, 64)
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// ErrNotEntry is wrapped when a commit on the log is not a well-formed entry.
var ErrNotEntry = errors.New("rsl: not an RSL entry commit")

// FromCommit checks the commit-level shape of an entry (empty tree, signed,
// at most one parent) and decodes its message. It does not verify the
// signature nor the chain.
func FromCommit(c *gitrepo.Commit) (*Entry, error) {
	if !c.Tree.IsEmptyTree() {
		return nil, fmt.Errorf("%w %s: tree is not empty", ErrNotEntry, c.Hash)
	}
	if len(c.Parents) > 1 {
		return nil, fmt.Errorf("%w %s: %d parents", ErrNotEntry, c.Hash, len(c.Parents))
	}
	if len(c.Signature) == 0 {
		return nil, fmt.Errorf("%w %s: unsigned", ErrNotEntry, c.Hash)
	}
	e, err := decode(c.Message)
	if err != nil {
		return nil, Context("entry "+c.Hash.String(), err)
	}
	if (e.Number == 1) != (len(c.Parents) == 0) {
		return nil, fmt.Errorf("%w %s: entry #%d has %d parents", ErrNotEntry, c.Hash, e.Number, len(c.Parents))
	}
	return e, nil
}

// Payload returns the unsigned commit bytes of entry e on top of parent
// (zero for the first entry), made by who at who.When. The caller signs the
// payload and adds the signature with gitrepo.AddSignature.
func Payload(e *Entry, parent gitrepo.Hash, who gitrepo.Ident) ([]byte, error) {
	msg, err := e.Encode()
	if err != nil {
		return nil, err
	}
	tree, _ := gitrepo.ParseHash(gitrepo.EmptyTreeHash)
	var parents []gitrepo.Hash
	if !parent.IsZero() {
		parents = []gitrepo.Hash{parent}
	}
	return gitrepo.EncodeCommit(tree, parents, who, who, string(msg)), nil
}
