// Package pushcert reads, checks and stores git push certificates (git
// push --signed): the statement, signed by the pusher, that they asked a
// given server (pushee), in a session it opened (nonce), to move each ref
// from one object to another.
//
// Nothing it reads is trusted: a certificate counts only once its SSH or
// OpenPGP signature verifies with a key the caller trusts (the caller's lookup:
// a person of the policy in force) and its updates are exactly those of
// the log entries it is stored for. Parse and Check are pure; the store
// (store.go) reads and writes git objects through the small interfaces it
// declares. Nothing here keeps state: safe for concurrent use.
package pushcert

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/sign"
)

// Limits on what Parse reads: a certificate is a few lines per pushed ref.
const (
	// MaxSize bounds a certificate's bytes (git keeps the whole of it in
	// memory too).
	MaxSize = 64 << 10
	// MaxUpdates bounds its ref updates.
	MaxUpdates = 512
	// MaxOptions bounds its push-option lines.
	MaxOptions = 32
	// maxLine bounds one header line.
	maxLine = 4096
)

// Namespace is the SSHSIG namespace git signs push certificates in (the
// one of commits and tags: git's sign_buffer).
const Namespace = sign.NamespaceGit

// ErrMalformed is the kind of a certificate that is not in the format
// git writes (version 0.1, SSH or OpenPGP signature).
var ErrMalformed = errors.New("malformed push certificate")

// Update is one ref update a certificate states.
type Update struct {
	Ref      string
	Old, New gitrepo.Hash
}

// Cert is a parsed push certificate. Raw is the whole certificate as git
// wrote it; Payload is the signed part (everything before the signature).
type Cert struct {
	Raw       []byte
	Payload   []byte
	Signature []byte // the armored signature block, SSH or OpenPGP
	// Format is FormatSSH or FormatOpenPGP, the kind of Signature.
	Format string

	// Pusher is the signing key as git names it: "SHA256:…" for an SSH
	// key; for OpenPGP, user.signingkey as configured (a fingerprint or
	// key ID) or, unset, the committer ident "Name <email>". PushTime and
	// TZ are the date git stamped it with.
	Pusher   string
	PushTime int64
	TZ       string
	// pusherLine is the pusher line's value as written (git puts one or
	// two spaces before the date, depending on the key kind).
	pusherLine string
	// Pushee is the URL the pusher pushed to (git leaves out any user and
	// password); Nonce the session nonce the server issued.
	Pushee  string
	Nonce   string
	Options []string
	Updates []Update
}

// The signature formats git signs certificates in (gpg.format).
const (
	FormatSSH     = "ssh"
	FormatOpenPGP = "openpgp"
)

const (
	sigBegin = "-----BEGIN SSH SIGNATURE-----\n"
	sigEnd   = "-----END SSH SIGNATURE-----\n"
	pgpBegin = "-----BEGIN PGP SIGNATURE-----\n"
	pgpEnd   = "-----END PGP SIGNATURE-----\n"
)

// split finds the one armored signature block, SSH or OpenPGP, that ends
// the certificate and starts a line, and checks its armor.
func split(raw []byte) (*Cert, error) {
	format, begin, end := FormatSSH, sigBegin, sigEnd
	i := bytes.Index(raw, []byte(sigBegin))
	if j := bytes.Index(raw, []byte(pgpBegin)); j >= 0 && (i < 0 || j < i) {
		format, begin, end, i = FormatOpenPGP, pgpBegin, pgpEnd, j
	}
	if i < 0 {
		return nil, errors.New("no SSH or OpenPGP signature")
	}
	if i == 0 || raw[i-1] != '\n' {
		return nil, errors.New("signature does not start a line")
	}
	c := &Cert{Raw: raw, Payload: raw[:i], Signature: raw[i:], Format: format}
	if err := checkArmor(c.Signature, begin, end); err != nil {
		return nil, err
	}
	return c, nil
}

// Parse parses a certificate strictly: the header lines in git's order
// (version 0.1, pusher, then optional pushee, nonce and push-option lines),
// a blank line, one "<old> <new> <ref>" line per ref (each ref once, at
// least one), and one armored signature, SSH or OpenPGP (gpg.format
// openpgp, git's default: "-----BEGIN PGP SIGNATURE-----", a blank line,
// base64, no armor header), with nothing after it. Any
// other byte, a size over MaxSize or a count over the limits fails with
// ErrMalformed. Whatever parses keeps Raw byte for byte.
func Parse(raw []byte) (*Cert, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
	}
	if len(raw) > MaxSize {
		return nil, bad("%d bytes, more than %d", len(raw), MaxSize)
	}
	c, err := split(raw)
	if err != nil {
		return nil, bad("%v", err)
	}
	lines := strings.Split(string(c.Payload), "\n")
	if len(lines) < 2 || lines[len(lines)-1] != "" {
		return nil, bad("the signed part does not end in a newline")
	}
	lines = lines[:len(lines)-1]
	if lines[0] != "certificate version 0.1" {
		return nil, bad("first line %.64q, want \"certificate version 0.1\"", lines[0])
	}
	for _, l := range lines {
		if len(l) > maxLine {
			return nil, bad("a line of %d bytes", len(l))
		}
		if !printable(l) {
			return nil, bad("a control character in %.64q", l)
		}
	}
	n, err := c.parseHeader(lines)
	if err != nil {
		return nil, bad("%v", err)
	}
	if err := c.parseUpdates(lines[n:]); err != nil {
		return nil, bad("%v", err)
	}
	return c, nil
}

// parseHeader reads the lines after the version line up to and including
// the blank line, in git's order, and returns the index of the first
// update line.
func (c *Cert) parseHeader(lines []string) (int, error) {
	n := 1
	next := func(prefix string) (string, bool) {
		if n < len(lines) && strings.HasPrefix(lines[n], prefix) {
			n++
			return lines[n-1][len(prefix):], true
		}
		return "", false
	}
	pusher, ok := next("pusher ")
	if !ok {
		return 0, errors.New("no pusher line")
	}
	if err := c.parsePusher(pusher); err != nil {
		return 0, err
	}
	if v, ok := next("pushee "); ok {
		if v == "" {
			return 0, errors.New("empty pushee")
		}
		c.Pushee = v
	}
	if v, ok := next("nonce "); ok {
		if v == "" {
			return 0, errors.New("empty nonce")
		}
		c.Nonce = v
	}
	for {
		v, ok := next("push-option ")
		if !ok {
			break
		}
		if len(c.Options) == MaxOptions {
			return 0, fmt.Errorf("more than %d push options", MaxOptions)
		}
		c.Options = append(c.Options, v)
	}
	if n >= len(lines) || lines[n] != "" {
		return 0, fmt.Errorf("unexpected header line %.64q", at(lines, n))
	}
	return n + 1, nil
}

// parseUpdates reads the "<old> <new> <ref>" lines: each ref once, at
// least one, at most MaxUpdates.
func (c *Cert) parseUpdates(lines []string) error {
	seen := map[string]bool{}
	for _, l := range lines {
		u, err := parseUpdate(l)
		if err != nil {
			return err
		}
		if seen[u.Ref] {
			return fmt.Errorf("%s updated twice", u.Ref)
		}
		if len(c.Updates) == MaxUpdates {
			return fmt.Errorf("more than %d ref updates", MaxUpdates)
		}
		seen[u.Ref] = true
		c.Updates = append(c.Updates, u)
	}
	if len(c.Updates) == 0 {
		return errors.New("no ref update")
	}
	return nil
}

func at(lines []string, n int) string {
	if n < len(lines) {
		return lines[n]
	}
	return "(end)"
}

// parsePusher reads "<key id> <unix time> <tz>"; git writes the key id
// and then the date after a separating space (two spaces between them
// for an SSH key: the date starts with one).
func (c *Cert) parsePusher(v string) error {
	f := strings.Fields(v)
	if len(f) < 3 || strings.TrimRight(v, " ") != v || strings.HasPrefix(v, " ") {
		return fmt.Errorf("pusher line %.64q is not \"<key> <time> <tz>\"", v)
	}
	tz := f[len(f)-1]
	if len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') || !digits(tz[1:]) {
		return fmt.Errorf("pusher time zone %.16q", tz)
	}
	ts := f[len(f)-2]
	t, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || !digits(ts) || t < 0 || strconv.FormatInt(t, 10) != ts {
		return fmt.Errorf("pusher time %.24q", ts)
	}
	id := strings.TrimRight(v[:len(v)-len(ts)-len(tz)-1], " ")
	if !strings.HasSuffix(v, " "+ts+" "+tz) || id == "" {
		return fmt.Errorf("pusher line %.64q is not \"<key> <time> <tz>\"", v)
	}
	c.Pusher, c.PushTime, c.TZ, c.pusherLine = id, t, tz, v
	return nil
}

func parseUpdate(l string) (Update, error) {
	f := strings.SplitN(l, " ", 3)
	if len(f) != 3 {
		return Update{}, fmt.Errorf("update line %.100q is not \"<old> <new> <ref>\"", l)
	}
	var u Update
	var err error
	if u.Old, err = strictHash(f[0]); err != nil {
		return Update{}, err
	}
	if u.New, err = strictHash(f[1]); err != nil {
		return Update{}, err
	}
	if err := gitrepo.ValidRefName(f[2]); err != nil || !strings.HasPrefix(f[2], "refs/") {
		return Update{}, fmt.Errorf("update of %.100q: not a full ref name", f[2])
	}
	u.Ref = f[2]
	return u, nil
}

func strictHash(s string) (gitrepo.Hash, error) {
	h, err := gitrepo.ParseHash(s)
	if err != nil || h.String() != s {
		return gitrepo.ZeroHash, fmt.Errorf("object name %.48q is not 40 lowercase hex digits", s)
	}
	return h, nil
}

// checkArmor accepts one armored signature block: base64 lines between
// the BEGIN and END lines (for OpenPGP, with the blank line that ends the
// armor headers, of which none is accepted, and the "=CRC" line), nothing
// after.
func checkArmor(sig []byte, begin, end string) error {
	body, ok := bytes.CutPrefix(sig, []byte(begin))
	if !ok || !bytes.HasSuffix(body, []byte(end)) || len(body) < len(end) {
		return errors.New("the signature block does not end the certificate")
	}
	body = body[:len(body)-len(end)]
	if len(body) == 0 || body[len(body)-1] != '\n' {
		return errors.New("empty or unterminated signature block")
	}
	for _, b := range body {
		switch {
		case b >= 'A' && b <= 'Z', b >= 'a' && b <= 'z', b >= '0' && b <= '9', b == '+', b == '/', b == '=', b == '\n':
		default:
			return fmt.Errorf("byte %q inside the signature block", b)
		}
	}
	return nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Update returns the update the certificate states for ref.
func (c *Cert) Update(ref string) (Update, bool) {
	for _, u := range c.Updates {
		if u.Ref == ref {
			return u, true
		}
	}
	return Update{}, false
}

// CheckSession requires what ties a certificate to one push to one
// server: a pushee URL and a nonce in git's form ("<time>-<hex HMAC>"),
// whose time is within a day of the pusher's date (git signs right after
// the server sends it). It fails with ErrMalformed naming what is missing.
func (c *Cert) CheckSession() error {
	if c.Pushee == "" {
		return fmt.Errorf("%w: no pushee (the URL pushed to)", ErrMalformed)
	}
	if c.Nonce == "" {
		return fmt.Errorf("%w: no nonce: the server did not ask for a signed push (receive.certNonceSeed unset)", ErrMalformed)
	}
	stamp, mac, ok := strings.Cut(c.Nonce, "-")
	if !ok || !digits(stamp) || len(mac) != 40 || !lowerHex(mac) {
		return fmt.Errorf("%w: nonce %.64q is not git's \"<time>-<40 hex>\"", ErrMalformed, c.Nonce)
	}
	t, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: nonce time %.24q", ErrMalformed, stamp)
	}
	if d := t - c.PushTime; d > 86400 || d < -86400 {
		return fmt.Errorf("%w: nonce issued at %d, pusher's date %d: more than a day apart", ErrMalformed, t, c.PushTime)
	}
	return nil
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// Verify checks the certificate's signature over its signed part and
// returns the trusted key, or an error wrapping sign.ErrUnknownKey (no
// trusted key: not a person of the policy) or sign.ErrBadSignature.
//
// An SSH signature must be in namespace "git" (as git signs) and is
// checked with the key lookup returns for the fingerprint embedded in it;
// a pusher line naming an SSH fingerprint must name that key.
//
// An OpenPGP signature (gpg -bsau, as git runs it) is checked in-process
// with the key lookup returns for the git-secure fingerprint of the
// primary key its issuer fingerprint names (sign.VerifyOpenPGPDetached);
// a pusher line naming a fingerprint or key ID in hex must name that key
// or the subkey that signed.
// A pusher line that is git's ident ("Name <email>", when
// user.signingkey is unset) is not checked: the policy's key is what
// identifies the person. A signature by an OpenPGP signing subkey counts
// only through VerifyWith.
func (c *Cert) Verify(lookup func(fingerprint string) (ssh.PublicKey, bool)) (ssh.PublicKey, error) {
	return c.VerifyWith(lookup, nil)
}

// VerifyWith is Verify that also takes OpenPGP signatures by a signing
// subkey: subkeyOwner names the git-secure fingerprint of the primary key
// that holds a subkey (policy.Policy.OpenPGPSubkeyOwner), and lookup is
// asked for that key.
func (c *Cert) VerifyWith(lookup func(fingerprint string) (ssh.PublicKey, bool), subkeyOwner func(subkey []byte) (string, bool)) (ssh.PublicKey, error) {
	if c.Format == FormatOpenPGP {
		key, err := sign.VerifyOpenPGPDetached(c.Signature, c.Payload, Namespace, lookup, subkeyOwner)
		if err != nil {
			return nil, err
		}
		issuer, err := sign.OpenPGPDetachedIssuer(c.Signature)
		if err != nil {
			return nil, err
		}
		if err := checkPGPPusher(c.Pusher, key, issuer); err != nil {
			return nil, err
		}
		return key, nil
	}
	key, err := sign.VerifySSHSig(c.Signature, c.Payload, Namespace, lookup)
	if err != nil {
		return nil, err
	}
	if _, ok := key.(*sign.OpenPGPKey); ok {
		// Only an SSH block reaches here; an OpenPGP key never makes one.
		return nil, fmt.Errorf("%w: an SSH signature block verified with OpenPGP key %s", sign.ErrBadSignature, sign.Fingerprint(key))
	}
	if fp := sign.Fingerprint(key); strings.HasPrefix(c.Pusher, "SHA256:") && c.Pusher != fp {
		return nil, fmt.Errorf("%w: the pusher line names %s, the signature is by %s", sign.ErrBadSignature, c.Pusher, fp)
	}
	return key, nil
}

// checkPGPPusher checks a pusher line that names an OpenPGP key in hex
// (user.signingkey as a fingerprint or a key ID, with or without "0x" and
// gpg's "!" suffix) against the key that signed: its primary key or the
// subkey that made the signature (issuer). Anything else (git's ident) is
// left alone.
func checkPGPPusher(pusher string, key ssh.PublicKey, issuer []byte) error {
	k, ok := key.(*sign.OpenPGPKey)
	if !ok {
		return fmt.Errorf("%w: OpenPGP signature verified with %s, not an OpenPGP key", sign.ErrBadSignature, sign.Fingerprint(key))
	}
	id := strings.ToUpper(strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(pusher, "0x"), "0X"), "!"))
	if !hexDigits(id) {
		return nil
	}
	switch len(id) {
	case 40, 64, 16, 8:
	default:
		return nil
	}
	for _, fpr := range []string{k.OpenPGPFingerprint(), strings.ToUpper(hex.EncodeToString(issuer))} {
		// A v4 key ID ends the fingerprint; a v6 one starts it.
		if id == fpr || len(id) < 40 && (len(fpr) == 40 && strings.HasSuffix(fpr, id) || len(fpr) == 64 && strings.HasPrefix(fpr, id)) {
			return nil
		}
	}
	return fmt.Errorf("%w: the pusher line names OpenPGP key %s, the signature is by %X (of %s)", sign.ErrBadSignature, pusher, issuer, k.OpenPGPFingerprint())
}

func hexDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f' || s[i] >= 'A' && s[i] <= 'F') {
			return false
		}
	}
	return s != ""
}

// SignerFingerprint is the git-secure fingerprint of the key the
// signature names (embedded SSH key; OpenPGP issuer fingerprint),
// unverified: for messages only.
func (c *Cert) SignerFingerprint() string { return c.SignerFingerprintWith(nil) }

// SignerFingerprintWith is SignerFingerprint that names an OpenPGP signing
// subkey by the key that holds it, as VerifyWith looks it up.
func (c *Cert) SignerFingerprintWith(subkeyOwner func(subkey []byte) (string, bool)) string {
	var fp string
	var err error
	if c.Format == FormatOpenPGP {
		fp, err = sign.OpenPGPDetachedFingerprint(c.Signature)
		if issuer, ierr := sign.OpenPGPDetachedIssuer(c.Signature); err == nil && ierr == nil && subkeyOwner != nil {
			if owner, ok := subkeyOwner(issuer); ok {
				fp = owner
			}
		}
	} else {
		fp, err = sign.SignatureFingerprint(c.Signature)
	}
	if err != nil {
		return "(unreadable signature)"
	}
	return fp
}

// ErrMismatch is the kind of a certificate stored for a log entry whose
// update it does not state: a certificate of another push (replayed).
var ErrMismatch = errors.New("push certificate does not match the entry")

// CheckEntry checks that c states exactly the update of one log entry,
// ref from old to new, in a push that also moved the log, logRef, and
// returns that move of the log: the caller checks that the entry lies in
// it (after its old value, up to its new one). Otherwise it fails with
// ErrMismatch, saying what the certificate states.
func (c *Cert) CheckEntry(logRef, ref string, old, new gitrepo.Hash) (Update, error) {
	u, ok := c.Update(ref)
	if !ok {
		return Update{}, fmt.Errorf("%w: it updates %s, not %s", ErrMismatch, c.refList(), ref)
	}
	if u.Old != old || u.New != new {
		return Update{}, fmt.Errorf("%w: it states %s %s..%s, the entry %s..%s", ErrMismatch, ref, short(u.Old), short(u.New), short(old), short(new))
	}
	l, ok := c.Update(logRef)
	if !ok || l.New.IsZero() {
		return Update{}, fmt.Errorf("%w: it does not move %s (the entry was not pushed with it)", ErrMismatch, logRef)
	}
	return l, nil
}

func (c *Cert) refList() string {
	var names []string
	for i, u := range c.Updates {
		if i == 4 {
			names = append(names, fmt.Sprintf("and %d more", len(c.Updates)-4))
			break
		}
		names = append(names, u.Ref)
	}
	return strings.Join(names, ", ")
}

func short(h gitrepo.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}

// Encode writes the certificate from its fields: the bytes Parse read.
func (c *Cert) Encode() []byte {
	var b bytes.Buffer
	b.WriteString("certificate version 0.1\n")
	b.WriteString("pusher " + c.pusherLine + "\n")
	if c.Pushee != "" {
		b.WriteString("pushee " + c.Pushee + "\n")
	}
	if c.Nonce != "" {
		b.WriteString("nonce " + c.Nonce + "\n")
	}
	for _, o := range c.Options {
		b.WriteString("push-option " + o + "\n")
	}
	b.WriteString("\n")
	for _, u := range c.Updates {
		fmt.Fprintf(&b, "%s %s %s\n", u.Old, u.New, u.Ref)
	}
	b.Write(c.Signature)
	return b.Bytes()
}
