package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxParents bounds the number of parents of a commit.
const maxParents = 1 << 10

// Commit is a parsed commit object.
type Commit struct {
	Hash      Hash // set by ReadCommit; zero from ParseCommit
	Tree      Hash
	Parents   []Hash
	Author    Ident
	Committer Ident
	// Signature is the value of the gpgsig header exactly as git hands it
	// to the verifier: the first line and each continuation line (without
	// its leading space), each terminated by '\n'. Nil if unsigned.
	Signature []byte
	Message   string
	Raw       []byte
}

// Ident is an author or committer line. When carries the original
// timezone offset.
type Ident struct {
	Name  string
	Email string
	When  time.Time
}

// String formats the identity as in a commit header.
func (id Ident) String() string {
	_, off := id.When.Zone()
	sign := byte('+')
	if off < 0 {
		sign = '-'
		off = -off
	}
	off /= 60
	return fmt.Sprintf("%s <%s> %d %c%02d%02d", stripCrud(id.Name), stripCrud(id.Email), id.When.Unix(), sign, off/60, off%60)
}

// stripCrud removes characters that cannot appear in an ident field.
func stripCrud(s string) string {
	if !strings.ContainsAny(s, "<>\n\x00") {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch r {
		case '<', '>', '\n', 0:
			return -1
		}
		return r
	}, s)
}

// parseIdent parses "Name <email> 1700000000 +0100".
func parseIdent(b []byte) (Ident, error) {
	lt := bytes.IndexByte(b, '<')
	if lt < 1 || b[lt-1] != ' ' {
		return Ident{}, errors.New("malformed ident: missing ' <'")
	}
	gt := bytes.IndexByte(b[lt:], '>')
	if gt < 0 {
		return Ident{}, errors.New("malformed ident: missing '>'")
	}
	gt += lt
	name, email, rest := b[:lt-1], b[lt+1:gt], b[gt+1:]
	if bytes.ContainsAny(name, "<>") || bytes.ContainsAny(email, "<") {
		return Ident{}, errors.New("malformed ident: stray '<' or '>'")
	}
	if len(rest) < 1 || rest[0] != ' ' {
		return Ident{}, errors.New("malformed ident: missing date")
	}
	rest = rest[1:]
	sp := bytes.IndexByte(rest, ' ')
	if sp < 1 || sp > 18 {
		return Ident{}, errors.New("malformed ident: bad timestamp")
	}
	for _, c := range rest[:sp] {
		if c < '0' || c > '9' {
			return Ident{}, errors.New("malformed ident: bad timestamp")
		}
	}
	if sp > 1 && rest[0] == '0' {
		return Ident{}, errors.New("malformed ident: timestamp with leading zero")
	}
	ts, err := strconv.ParseInt(string(rest[:sp]), 10, 64)
	if err != nil {
		return Ident{}, errors.New("malformed ident: bad timestamp")
	}
	tz := rest[sp+1:]
	if len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') {
		return Ident{}, errors.New("malformed ident: bad timezone")
	}
	for _, c := range tz[1:] {
		if c < '0' || c > '9' {
			return Ident{}, errors.New("malformed ident: bad timezone")
		}
	}
	hh := int(tz[1]-'0')*10 + int(tz[2]-'0')
	mm := int(tz[3]-'0')*10 + int(tz[4]-'0')
	if mm >= 60 {
		return Ident{}, errors.New("malformed ident: bad timezone")
	}
	off := (hh*60 + mm) * 60
	if tz[0] == '-' {
		off = -off
	}
	return Ident{Name: string(name), Email: string(email), When: time.Unix(ts, 0).In(time.FixedZone("", off))}, nil
}

// header is one commit header with its continuation lines.
type header struct {
	key   string
	value []byte // first line and continuation lines joined by '\n' (leading space removed), no trailing '\n'
	start int    // offset of the header line in raw
	end   int    // offset just past the last line's '\n'
}

// headerKey returns key as a string, without allocating for the usual ones.
func headerKey(key []byte) string {
	for _, k := range [...]string{"tree", "parent", "author", "committer", "gpgsig", "gpgsig-sha256", "encoding", "mergetag"} {
		if string(key) == k {
			return k
		}
	}
	return string(key)
}

// splitHeaders splits raw into headers (appended to hs) and the message.
// It requires the blank line that separates them. A one-line value is a
// slice of raw whose capacity ends with it, so that appending to it never
// writes into raw; a value with continuation lines is joined in a copy.
//
// alloc, when not nil, gives the joined copies' bytes (see parseCommit).
func splitHeaders(hs []header, raw []byte, alloc func(n int) []byte) ([]header, []byte, error) {
	pos := 0
	for {
		if pos >= len(raw) {
			return nil, nil, errors.New("missing blank line after headers")
		}
		if raw[pos] == '\n' {
			return hs, raw[pos+1:], nil
		}
		nl := bytes.IndexByte(raw[pos:], '\n')
		if nl < 0 {
			return nil, nil, errors.New("unterminated header line")
		}
		line := raw[pos : pos+nl]
		if bytes.IndexByte(line, 0) >= 0 {
			return nil, nil, errors.New("NUL in header")
		}
		if line[0] == ' ' {
			if len(hs) == 0 {
				return nil, nil, errors.New("continuation line without header")
			}
			h := &hs[len(hs)-1]
			h.value = append(append(h.value, '\n'), line[1:]...)
			h.end = pos + nl + 1
			pos = h.end
			continue
		}
		key, value, ok := bytes.Cut(line, []byte{' '})
		if !ok || len(key) == 0 {
			return nil, nil, fmt.Errorf("malformed header line %q", truncate(string(line), 40))
		}
		for _, c := range key {
			if c <= ' ' || c >= 0x7f {
				return nil, nil, fmt.Errorf("malformed header key %q", truncate(string(key), 40))
			}
		}
		end := pos + nl + 1
		for end < len(raw) && raw[end] == ' ' {
			next := bytes.IndexByte(raw[end:], '\n')
			if next < 0 {
				break
			}
			end += next + 1
		}
		if end > pos+nl+1 {
			// Continuation lines follow (a signature's armor): the value
			// is joined in one copy that has room for all of them.
			n := end - pos - len(key) - 1
			var buf []byte
			if alloc != nil {
				buf = alloc(n)[:0:n]
			} else {
				buf = make([]byte, 0, n)
			}
			value = append(buf, value...)
		} else {
			value = value[:len(value):len(value)]
		}
		hs = append(hs, header{key: headerKey(key), value: value, start: pos, end: pos + nl + 1})
		pos += nl + 1
	}
}

// ParseCommit strictly parses a raw commit object. Headers must come in
// git's order: tree, parent*, author, committer, then optional other
// headers (kept only in Raw). At most one gpgsig header is allowed.
func ParseCommit(raw []byte) (*Commit, error) { return parseCommit(raw, nil) }

// parseCommit is ParseCommit with the bytes of the joined signature taken
// from alloc(n) (n bytes the caller owns; nil: allocated), so that a
// reader of a long chain can recycle them with the raw bytes.
func parseCommit(raw []byte, alloc func(n int) []byte) (*Commit, error) {
	// A commit has a handful of headers: kept on the stack.
	var buf [8]header
	hs, msg, err := splitHeaders(buf[:0], raw, alloc)
	if err != nil {
		return nil, wrapf(err, "parse commit")
	}
	c := &Commit{Raw: raw, Message: string(msg)}
	i := 0
	single := func(key string) ([]byte, error) {
		if i >= len(hs) || hs[i].key != key {
			return nil, fmt.Errorf("gitrepo: parse commit: missing %s header", key)
		}
		if bytes.IndexByte(hs[i].value, '\n') >= 0 {
			return nil, fmt.Errorf("gitrepo: parse commit: %s header has continuation lines", key)
		}
		v := hs[i].value
		i++
		return v, nil
	}
	v, err := single("tree")
	if err != nil {
		return nil, err
	}
	if c.Tree, err = parseHashBytes(v); err != nil {
		return nil, wrapf(err, "parse commit: tree")
	}
	for i < len(hs) && hs[i].key == "parent" {
		v, err := single("parent")
		if err != nil {
			return nil, err
		}
		p, err := parseHashBytes(v)
		if err != nil {
			return nil, wrapf(err, "parse commit: parent")
		}
		if len(c.Parents) >= maxParents {
			return nil, errors.New("gitrepo: parse commit: too many parents")
		}
		c.Parents = append(c.Parents, p)
	}
	if v, err = single("author"); err != nil {
		return nil, err
	}
	if c.Author, err = parseIdent(v); err != nil {
		return nil, wrapf(err, "parse commit: author")
	}
	if v, err = single("committer"); err != nil {
		return nil, err
	}
	if c.Committer, err = parseIdent(v); err != nil {
		return nil, wrapf(err, "parse commit: committer")
	}
	for ; i < len(hs); i++ {
		switch hs[i].key {
		case "tree", "parent", "author", "committer":
			return nil, fmt.Errorf("gitrepo: parse commit: unexpected %s header", hs[i].key)
		case "gpgsig":
			if c.Signature != nil {
				return nil, errors.New("gitrepo: parse commit: more than one gpgsig header")
			}
			c.Signature = append(hs[i].value, '\n')
		case "gpgsig-sha256":
		default:
			if strings.HasPrefix(hs[i].key, "gpgsig") {
				return nil, fmt.Errorf("gitrepo: parse commit: unknown signature header %q", truncate(hs[i].key, 40))
			}
		}
	}
	return c, nil
}

// SignedPayload returns Raw without the gpgsig header and its continuation
// lines (and without any other gpgsig-* header, as git removes them too):
// exactly the bytes git signs and verifies.
func (c *Commit) SignedPayload() []byte {
	return c.AppendSignedPayload(make([]byte, 0, len(c.Raw)))
}

// AppendSignedPayload appends SignedPayload to out and returns it, or
// returns nil as SignedPayload does: a verifier that checks many commits
// reuses one buffer.
func (c *Commit) AppendSignedPayload(out []byte) []byte {
	// The header block is walked in place (what splitHeaders accepts,
	// without copying any value): this runs for every entry verified.
	raw := c.Raw
	if !headersValid(raw) {
		return nil
	}
	keep, pos := 0, 0 // raw[keep:pos] is not copied yet
	dropping := false // inside a gpgsig header
	for raw[pos] != '\n' {
		nl := bytes.IndexByte(raw[pos:], '\n')
		if raw[pos] != ' ' { // a header starts here
			if dropping {
				keep, dropping = pos, false
			}
			if bytes.HasPrefix(raw[pos:pos+nl], []byte("gpgsig")) {
				out = append(out, raw[keep:pos]...)
				dropping = true
			}
		}
		pos += nl + 1
	}
	if dropping {
		keep = pos
	}
	return append(out, raw[keep:]...)
}

// headersValid reports whether splitHeaders accepts raw's header block.
func headersValid(raw []byte) bool {
	pos, any := 0, false
	for {
		if pos >= len(raw) {
			return false
		}
		if raw[pos] == '\n' {
			return true
		}
		nl := bytes.IndexByte(raw[pos:], '\n')
		if nl < 0 {
			return false
		}
		line := raw[pos : pos+nl]
		if bytes.IndexByte(line, 0) >= 0 {
			return false
		}
		if line[0] == ' ' {
			if !any {
				return false
			}
		} else {
			key, _, ok := bytes.Cut(line, []byte{' '})
			if !ok || len(key) == 0 {
				return false
			}
			for _, c := range key {
				if c <= ' ' || c >= 0x7f {
					return false
				}
			}
			any = true
		}
		pos += nl + 1
	}
}

// EncodeCommit returns the raw bytes of an unsigned commit. Characters that
// cannot appear in an ident ('<', '>', newline, NUL) are removed from names
// and emails. The message is written as given.
func EncodeCommit(tree Hash, parents []Hash, author, committer Ident, message string) []byte {
	var b bytes.Buffer
	b.Grow(200 + 48*len(parents) + len(message))
	b.WriteString("tree ")
	b.WriteString(tree.String())
	b.WriteByte('\n')
	for _, p := range parents {
		b.WriteString("parent ")
		b.WriteString(p.String())
		b.WriteByte('\n')
	}
	b.WriteString("author ")
	b.WriteString(author.String())
	b.WriteString("\ncommitter ")
	b.WriteString(committer.String())
	b.WriteString("\n\n")
	b.WriteString(message)
	return b.Bytes()
}

// AddSignature inserts armoredSig as a gpgsig header at the end of the
// headers of payload (after committer and any other headers), as git does:
// "gpgsig <line1>\n <line2>\n ...". payload must be an unsigned commit.
func AddSignature(payload []byte, armoredSig []byte) ([]byte, error) {
	if len(bytes.TrimSpace(armoredSig)) == 0 {
		return nil, errors.New("gitrepo: add signature: empty signature")
	}
	if bytes.IndexByte(armoredSig, 0) >= 0 || bytes.IndexByte(armoredSig, '\r') >= 0 {
		return nil, errors.New("gitrepo: add signature: signature contains NUL or CR")
	}
	if _, err := ParseCommit(payload); err != nil {
		return nil, wrapf(err, "add signature")
	}
	hs, _, _ := splitHeaders(nil, payload, nil)
	for _, h := range hs {
		if strings.HasPrefix(h.key, "gpgsig") {
			return nil, errors.New("gitrepo: add signature: payload is already signed")
		}
	}
	sig := armoredSig
	if sig[len(sig)-1] != '\n' {
		sig = append(append([]byte(nil), sig...), '\n')
	}
	inspos := hs[len(hs)-1].end
	var b bytes.Buffer
	b.Grow(len(payload) + len(sig) + 64)
	b.Write(payload[:inspos])
	b.WriteString("gpgsig")
	for len(sig) > 0 {
		nl := bytes.IndexByte(sig, '\n')
		b.WriteByte(' ')
		b.Write(sig[:nl+1])
		sig = sig[nl+1:]
	}
	b.Write(payload[inspos:])
	return b.Bytes(), nil
}
