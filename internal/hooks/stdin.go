package hooks

import (
	"errors"
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// The one reader of what git writes to a hook's standard input. Every hook
// reads its input through hookLines, which is strict (git is the only
// writer, so anything else is refused, never skipped or repaired), and
// then decodes the fields of each line for its own format:
//
//	pre-receive, post-receive    <old> SP <new> SP <ref>                 (ParseRefLines)
//	reference-transaction        <old> SP <new> SP <name>                (parseTransaction)
//	pre-push                     <local ref> SP <local> SP <remote ref> SP <remote>   (parsePushLines)

// maxHookLine bounds one line of hook input.
const maxHookLine = 4096

// RefLine is one "<old> <new> <ref>" line of pre-receive input.
type RefLine struct {
	Old, New gitrepo.Hash
	Ref      string
	// OldTarget, NewTarget are a symbolic ref's values ("ref:<target>" in
	// reference-transaction input since git 2.46; Old and New are then
	// zero). Only the client's reference-transaction hook accepts them.
	OldTarget, NewTarget string
}

// PushLine is one line of pre-push input: the local ref ("(delete)" for
// a deletion, or the source expression the user gave) and its value, and
// the remote ref and the value the remote has.
type PushLine struct {
	LocalRef  string
	Local     gitrepo.Hash
	RemoteRef string
	Remote    gitrepo.Hash
}

// hookLines splits hook input into its lines, each split into its fields
// at single spaces: every line ends with a newline, holds no CR (which
// bufio.Scanner would silently drop) or NUL or other control character,
// is at most maxHookLine bytes, and has at least minFields fields, none
// empty. Empty input is no lines.
func hookLines(input []byte, minFields int) ([][]string, error) {
	if len(input) == 0 {
		return nil, nil
	}
	if input[len(input)-1] != '\n' {
		return nil, errors.New("hooks: input does not end with a newline")
	}
	var out [][]string
	for _, line := range strings.Split(string(input[:len(input)-1]), "\n") {
		f := strings.Split(line, " ")
		if len(line) > maxHookLine || strings.ContainsFunc(line, isControl) || len(f) < minFields || containsEmpty(f) {
			return nil, fmt.Errorf("hooks: bad input line %q", truncate(line))
		}
		out = append(out, f)
	}
	return out, nil
}

func isControl(c rune) bool { return c < 0x20 || c == 0x7f }

func containsEmpty(f []string) bool {
	for _, s := range f {
		if s == "" {
			return true
		}
	}
	return false
}

// ParseRefLines parses pre-receive (and post-receive) input strictly:
// three fields, two object names and a valid ref under refs/.
func ParseRefLines(input []byte) ([]RefLine, error) {
	return refLines(input, func(f []string) (RefLine, error) {
		l, err := hashLine(f)
		if err == nil {
			err = gitrepo.ValidRefName(l.Ref)
		}
		return l, err
	})
}

// parseTransaction reads reference-transaction input: "<old> <new> <ref>"
// lines, where ref may also be HEAD or another name outside refs/ (kept;
// callers skip what they do not judge). A line that cannot be read fails:
// a transaction the hook cannot read is refused.
func parseTransaction(input []byte) ([]RefLine, error) { return refLines(input, hashLine) }

// parseClientTransaction is parseTransaction that also accepts the values
// of symbolic refs ("ref:<target>", git 2.46 and later), which a client's
// checkouts produce for HEAD.
func parseClientTransaction(input []byte) ([]RefLine, error) {
	return refLines(input, func(f []string) (RefLine, error) {
		l := RefLine{Ref: f[2]}
		var err1, err2 error
		l.Old, l.OldTarget, err1 = refValue(f[0])
		l.New, l.NewTarget, err2 = refValue(f[1])
		return l, errors.Join(err1, err2)
	})
}

// refLines reads lines of exactly three fields, each decoded by decode.
func refLines(input []byte, decode func([]string) (RefLine, error)) ([]RefLine, error) {
	lines, err := hookLines(input, 3)
	if err != nil {
		return nil, err
	}
	out := make([]RefLine, 0, len(lines))
	for _, f := range lines {
		if len(f) != 3 {
			return nil, fmt.Errorf("hooks: bad input line %q", truncate(strings.Join(f, " ")))
		}
		l, err := decode(f)
		if err != nil {
			return nil, fmt.Errorf("hooks: bad input line %q: %w", truncate(strings.Join(f, " ")), err)
		}
		out = append(out, l)
	}
	return out, nil
}

// hashLine decodes "<old> <new> <name>" with object names on both sides.
func hashLine(f []string) (RefLine, error) {
	old, err1 := gitrepo.ParseHash(f[0])
	nw, err2 := gitrepo.ParseHash(f[1])
	if err1 != nil || err2 != nil {
		return RefLine{}, errors.New("bad object name")
	}
	return RefLine{Old: old, New: nw, Ref: f[2]}, nil
}

// refValue decodes a reference-transaction value: an object name, or
// "ref:<target>" for a symbolic ref.
func refValue(s string) (gitrepo.Hash, string, error) {
	if target, ok := strings.CutPrefix(s, "ref:"); ok {
		if target == "" {
			return gitrepo.ZeroHash, "", errors.New("empty symbolic ref target")
		}
		return gitrepo.ZeroHash, target, nil
	}
	h, err := gitrepo.ParseHash(s)
	if err != nil {
		return gitrepo.ZeroHash, "", errors.New("bad object name")
	}
	return h, "", nil
}

// parsePushLines parses pre-push input strictly. The local ref is what
// the user named as the source ("(delete)", a ref, or an expression such
// as HEAD~1, which may hold spaces), so the line is read from its end:
// the remote value, the remote ref (a valid ref), the local value.
func parsePushLines(input []byte) ([]PushLine, error) {
	lines, err := hookLines(input, 4)
	if err != nil {
		return nil, err
	}
	out := make([]PushLine, 0, len(lines))
	for _, f := range lines {
		n := len(f)
		l := PushLine{LocalRef: strings.Join(f[:n-3], " "), RemoteRef: f[n-2]}
		var err1, err2 error
		l.Local, err1 = gitrepo.ParseHash(f[n-3])
		l.Remote, err2 = gitrepo.ParseHash(f[n-1])
		if err := errors.Join(err1, err2, gitrepo.ValidRefName(l.RemoteRef)); err != nil {
			return nil, fmt.Errorf("hooks: bad pre-push line %q: %w", truncate(strings.Join(f, " ")), err)
		}
		out = append(out, l)
	}
	return out, nil
}

// readOrRefuse reads a hook's input with parse; input the hook cannot
// read refuses the operation, saying so (what names the input).
func readOrRefuse[T any](c *Context, input []byte, parse func([]byte) ([]T, error), what string) ([]T, error) {
	lines, err := parse(input)
	if err != nil {
		c.say("error: cannot read %s: %v", what, err)
		c.say("hint: git writes this input; if it came from git, report it with the line above")
		return nil, ErrRejected
	}
	return lines, nil
}

func truncate(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
