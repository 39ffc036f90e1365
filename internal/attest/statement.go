package attest

import (
	"fmt"
	"math"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// maxDurationMs is the largest durationMs written or accepted: predicate
// numbers travel as JSON (IEEE 754 double) numbers, exact up to 2^53-1.
const maxDurationMs = 1<<53 - 1

// Approval is the predicate of an approval statement: the signer approves
// moving Ref from From to To. A zero From is a creation, a zero To a
// deletion. A non-zero ToTree binds the approval to the tree of the new
// commit instead of the commit itself (for rebases); it requires a non-zero
// To.
type Approval struct {
	Ref      string
	From, To gitrepo.Hash
	ToTree   gitrepo.Hash // zero = bound to commit
}

// TestRun is the predicate of a test-run statement: Command was run on Tree
// (checked out from Commit, zero if unknown) and exited with ExitCode after
// DurationMs milliseconds. Tools maps tool names to versions ("go" ->
// "go1.26.8"). StartedAt is written in UTC.
type TestRun struct {
	Tree, Commit gitrepo.Hash
	Command      []string
	ExitCode     int
	DurationMs   int64
	Tools        map[string]string
	StartedAt    time.Time
}

func (a Approval) validate() error {
	if err := ValidRef(a.Ref); err != nil {
		return err
	}
	if a.From == a.To {
		return malformed("approval from and to are equal (%s)", hexOf(a.To))
	}
	if a.To.IsZero() && !a.ToTree.IsZero() {
		return malformed("approval of a deletion has toTree")
	}
	return nil
}

// Matches returns nil if a approves exactly moving ref from from to to, and
// an error wrapping ErrMismatch otherwise.
func (a Approval) Matches(ref string, from, to gitrepo.Hash) error {
	if a.Ref != ref || a.From != from || a.To != to {
		return fmt.Errorf("%w: approval is for %s %s..%s, not %s %s..%s", ErrMismatch,
			a.Ref, hexOf(a.From), hexOf(a.To), ref, hexOf(from), hexOf(to))
	}
	return nil
}

// Statement returns the canonical in-toto Statement v1 JSON of a.
func (a Approval) Statement() ([]byte, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	pred := map[string]any{
		"formatVersion": FormatVersion,
		"ref":           a.Ref,
		"from":          hexOf(a.From),
		"to":            hexOf(a.To),
	}
	if !a.ToTree.IsZero() {
		pred["toTree"] = hexOf(a.ToTree)
	}
	return encodeStatement(a.Ref, "gitCommit", hexOf(a.To), PredicateApproval, pred)
}

func (t TestRun) validate() error {
	if t.Tree.IsZero() {
		return malformed("test run: zero tree")
	}
	if len(t.Command) == 0 {
		return malformed("test run: empty command")
	}
	if t.ExitCode < math.MinInt32 || t.ExitCode > math.MaxInt32 {
		return malformed("test run: exit code %d out of range", t.ExitCode)
	}
	if t.DurationMs < 0 || t.DurationMs > maxDurationMs {
		return malformed("test run: duration %d out of range", t.DurationMs)
	}
	if t.StartedAt.IsZero() {
		return malformed("test run: zero start time")
	}
	if y := t.StartedAt.UTC().Year(); y < 1 || y > 9999 {
		return malformed("test run: start time year %d out of range", y)
	}
	return nil
}

// Statement returns the canonical in-toto Statement v1 JSON of t.
func (t TestRun) Statement() ([]byte, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	cmd := make([]any, len(t.Command))
	for i, c := range t.Command {
		cmd[i] = c
	}
	tools := make(map[string]any, len(t.Tools))
	for k, v := range t.Tools {
		tools[k] = v
	}
	pred := map[string]any{
		"formatVersion": FormatVersion,
		"tree":          hexOf(t.Tree),
		"commit":        hexOf(t.Commit),
		"command":       cmd,
		"exitCode":      t.ExitCode,
		"durationMs":    t.DurationMs,
		"tools":         tools,
		"startedAt":     t.StartedAt.UTC().Format(time.RFC3339Nano),
	}
	return encodeStatement("tree", "gitTree", hexOf(t.Tree), PredicateTestRun, pred)
}

// encodeStatement returns the compact in-toto Statement v1 JSON with one
// subject (name, {alg: digest}), predicateType and pred: what protojson
// writes for in-toto's go/v1 types, without linking them (intoto.go).
func encodeStatement(name, alg, digest, predicateType string, pred map[string]any) ([]byte, error) {
	if err := validateInToto(name, alg, digest, predicateType); err != nil {
		return nil, malformed("statement: %v", err)
	}
	out, err := appendStatement(make([]byte, 0, 512), name, alg, digest, predicateType, pred)
	if err != nil {
		return nil, malformed("predicate: %v", err)
	}
	if len(out) > MaxStatementSize {
		return nil, malformed("statement is %d bytes, limit %d", len(out), MaxStatementSize)
	}
	return out, nil
}

// parseStatement checks the statement layer: size, strict JSON, exact
// top-level fields, _type, predicateType, and a single subject whose name is
// wantName (or any name if wantName is empty) with exactly one digest of
// algorithm alg. It also requires in-toto's own validator to accept it. It
// returns the subject name, the digest and the predicate object.
func parseStatement(data []byte, predicateType, alg string) (name string, digest gitrepo.Hash, pred object, err error) {
	if len(data) > MaxStatementSize {
		return "", digest, nil, malformed("statement is %d bytes, limit %d", len(data), MaxStatementSize)
	}
	v, err := decodeStrict(data)
	if err != nil {
		return "", digest, nil, malformed("statement: %v", err)
	}
	top, err := asObject(v, "statement")
	if err == nil {
		err = checkKeys(top, "statement", []string{"_type", "subject", "predicateType", "predicate"})
	}
	if err != nil {
		return "", digest, nil, malformed("%v", err)
	}
	if s, _ := top["_type"].(string); s != StatementType {
		return "", digest, nil, malformed("statement _type is not %q", StatementType)
	}
	if s, _ := top["predicateType"].(string); s != predicateType {
		return "", digest, nil, malformed("predicateType is not %q", predicateType)
	}
	subs, ok := top["subject"].([]any)
	if !ok || len(subs) != 1 {
		return "", digest, nil, malformed("statement must have exactly one subject")
	}
	sub, err := asObject(subs[0], "subject")
	if err == nil {
		err = checkKeys(sub, "subject", []string{"name", "digest"})
	}
	if err == nil {
		name, err = asString(sub["name"], "subject name")
	}
	var dig object
	if err == nil {
		dig, err = asObject(sub["digest"], "subject digest")
	}
	if err == nil {
		err = checkKeys(dig, "subject digest", []string{alg})
	}
	var ds string
	if err == nil {
		ds, err = asString(dig[alg], "subject digest")
	}
	if err != nil {
		return "", digest, nil, malformed("%v", err)
	}
	if digest, err = parseHex(ds, "subject digest "+alg); err != nil {
		return "", digest, nil, err
	}
	if pred, err = asObject(top["predicate"], "predicate"); err != nil {
		return "", digest, nil, malformed("%v", err)
	}
	// Belt and braces: what in-toto's types would refuse is refused too
	// (intoto.go; statement_intoto_test.go checks it against them).
	if err := checkInTotoDecodable(data, pred); err != nil {
		return "", digest, nil, malformed("statement: %v", err)
	}
	if err := validateInToto(name, alg, ds, predicateType); err != nil {
		return "", digest, nil, malformed("statement: %v", err)
	}
	if fv, err := asInt(pred["formatVersion"], "predicate formatVersion", FormatVersion, FormatVersion); err != nil || fv != FormatVersion {
		return "", digest, nil, malformed("predicate formatVersion must be %d", FormatVersion)
	}
	return name, digest, pred, nil
}

func predHash(pred object, key string) (gitrepo.Hash, error) {
	s, err := asString(pred[key], "predicate "+key)
	if err != nil {
		return gitrepo.Hash{}, malformed("%v", err)
	}
	return parseHex(s, "predicate "+key)
}

// ParseApproval parses and strictly validates an approval statement. On
// error it returns the zero Approval and an error wrapping ErrMalformed.
func ParseApproval(statement []byte) (Approval, error) {
	a, err := parseApproval(statement)
	if err != nil {
		return Approval{}, err
	}
	return a, nil
}

func parseApproval(statement []byte) (Approval, error) {
	var a Approval
	name, subj, pred, err := parseStatement(statement, PredicateApproval, "gitCommit")
	if err != nil {
		return a, err
	}
	if err := checkKeys(pred, "approval predicate", []string{"formatVersion", "ref", "from", "to"}, "toTree"); err != nil {
		return a, malformed("%v", err)
	}
	if a.Ref, err = asString(pred["ref"], "predicate ref"); err != nil {
		return a, malformed("%v", err)
	}
	if a.From, err = predHash(pred, "from"); err != nil {
		return a, err
	}
	if a.To, err = predHash(pred, "to"); err != nil {
		return a, err
	}
	if _, ok := pred["toTree"]; ok {
		if a.ToTree, err = predHash(pred, "toTree"); err != nil {
			return a, err
		}
		if a.ToTree.IsZero() {
			return a, malformed("approval toTree is present but zero")
		}
	}
	if name != a.Ref {
		return Approval{}, malformed("subject name %q does not match predicate ref %q", name, a.Ref)
	}
	if subj != a.To {
		return Approval{}, malformed("subject gitCommit %s does not match predicate to %s", hexOf(subj), hexOf(a.To))
	}
	if err := a.validate(); err != nil {
		return Approval{}, err
	}
	return a, nil
}

// ParseTestRun parses and strictly validates a test-run statement. On
// error it returns the zero TestRun and an error wrapping ErrMalformed.
func ParseTestRun(statement []byte) (TestRun, error) {
	t, err := parseTestRun(statement)
	if err != nil {
		return TestRun{}, err
	}
	return t, nil
}

func parseTestRun(statement []byte) (TestRun, error) {
	var t TestRun
	name, subj, pred, err := parseStatement(statement, PredicateTestRun, "gitTree")
	if err != nil {
		return t, err
	}
	if name != "tree" {
		return t, malformed("test run subject name is %q, not \"tree\"", name)
	}
	if err := checkKeys(pred, "test-run predicate", []string{"formatVersion", "tree", "commit", "command", "exitCode", "durationMs", "tools", "startedAt"}); err != nil {
		return t, malformed("%v", err)
	}
	if t.Tree, err = predHash(pred, "tree"); err != nil {
		return t, err
	}
	if t.Commit, err = predHash(pred, "commit"); err != nil {
		return t, err
	}
	if t.Tree != subj {
		return TestRun{}, malformed("subject gitTree %s does not match predicate tree %s", hexOf(subj), hexOf(t.Tree))
	}
	cmd, ok := pred["command"].([]any)
	if !ok {
		return TestRun{}, malformed("predicate command: not an array")
	}
	for i, c := range cmd {
		s, err := asString(c, fmt.Sprintf("predicate command[%d]", i))
		if err != nil {
			return TestRun{}, malformed("%v", err)
		}
		t.Command = append(t.Command, s)
	}
	ec, err := asInt(pred["exitCode"], "predicate exitCode", math.MinInt32, math.MaxInt32)
	if err != nil {
		return TestRun{}, malformed("%v", err)
	}
	t.ExitCode = int(ec)
	if t.DurationMs, err = asInt(pred["durationMs"], "predicate durationMs", 0, maxDurationMs); err != nil {
		return TestRun{}, malformed("%v", err)
	}
	tools, err := asObject(pred["tools"], "predicate tools")
	if err != nil {
		return TestRun{}, malformed("%v", err)
	}
	t.Tools = make(map[string]string, len(tools))
	for k, v := range tools {
		s, err := asString(v, fmt.Sprintf("predicate tools[%q]", k))
		if err != nil {
			return TestRun{}, malformed("%v", err)
		}
		t.Tools[k] = s
	}
	sa, err := asString(pred["startedAt"], "predicate startedAt")
	if err != nil {
		return TestRun{}, malformed("%v", err)
	}
	ts, err := time.Parse(time.RFC3339Nano, sa)
	if err != nil {
		return TestRun{}, malformed("predicate startedAt: %v", err)
	}
	t.StartedAt = ts.UTC()
	if err := t.validate(); err != nil {
		return TestRun{}, err
	}
	return t, nil
}
