// Package report tells a person what went wrong, in the same words from
// every entry point of git-secure: the command line, the server hooks and
// the remote helper. It holds the exit codes, one typed error for a failure
// the user must act on (a message, a hint, an exit code), and one printer
// of messages and verification problems with their hints.
//
// Everything it prints goes through internal/display, so text taken from
// a repository (ref names, reasons, persons) is escaped for the terminal.
// It has no state and is safe for concurrent use as long as each Printer's
// writer is.
package report

import (
	"errors"
	"fmt"
	"io"

	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/verify"
)

// Exit codes, fixed: other tools rely on them.
const (
	ExitOK          = 0
	ExitFailed      = 1 // a check failed: verification, a refused update or policy change
	ExitUsage       = 2 // usage or environment error
	ExitInterrupted = 130
)

// Error is a failure the user has to act on: Msg says what happened,
// Hint (optional) what to do next, Code is the exit code. An Error with an
// empty Msg and Hint prints nothing: the command has already said why (a
// failed check it printed, a usage text).
type Error struct {
	Code int
	Msg  string
	Hint string
	// Err is the cause, for errors.Is and errors.As; its text is not
	// printed (Msg says it in the user's words).
	Err error
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Usagef is a usage or environment error (exit 2): a wrong argument, a
// missing key, not a repository.
func Usagef(format string, args ...any) *Error {
	return &Error{Code: ExitUsage, Msg: fmt.Sprintf(format, args...)}
}

// Exit is an error that only sets the exit code: the command has printed
// what the user needs.
func Exit(code int) *Error { return &Error{Code: code} }

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Printer writes messages for a person, one per call, as
// "git-secure: LABEL: message".
type Printer struct {
	W io.Writer
	// Wrap wraps each message to display.Width columns (set when W is a
	// terminal; logs and scripts keep one line per message).
	Wrap bool
	// HangLabel aligns the continuation lines of a wrapped message under
	// the text after the label (the command line's layout) instead of
	// under "git-secure: " (the remote helper's, whose lines git shows
	// among its own).
	HangLabel bool
	// Max bounds the problems Problems prints (0: all): a remote or a
	// pusher chooses how many refs fail.
	Max int
}

// Say prints one message with its label ("error", "hint", "warning";
// "" for none). The label is a constant of the caller; the arguments are
// escaped.
func (p Printer) Say(label, format string, args ...any) {
	prefix := "git-secure: "
	if label != "" {
		if p.Wrap && !p.HangLabel {
			format = label + ": " + format
		} else {
			prefix += label + ": "
		}
	}
	if p.Wrap {
		display.Fprintw(p.W, 0, prefix, format, args...)
		return
	}
	display.Fprintf(p.W, prefix+format+"\n", args...)
}

// Problem prints one verification problem under label ("error",
// "rejected") and the hint that goes with it ("" for none).
func (p Printer) Problem(label string, pr *verify.Problem, hint string) {
	p.Say(label, "%s", pr.Error())
	if hint != "" {
		p.Say("hint", "%s", hint)
	}
}

// Problems prints every problem of f under label, each with hint(problem),
// or with the problem's own hint when hint is nil; with Max set, the
// first Max of them and how many more there are.
func (p Printer) Problems(label string, f *verify.Failed, hint func(*verify.Problem) string) {
	for i, pr := range f.Problems {
		if p.Max > 0 && i == p.Max {
			p.Say(label, "... and %d more problem(s), not shown", len(f.Problems)-i)
			return
		}
		h := pr.Hint
		if hint != nil {
			h = hint(pr)
		}
		p.Problem(label, pr, h)
	}
}

// Failed prints a failed verification: every problem with its hint, then
// how many there were.
func (p Printer) Failed(f *verify.Failed) {
	p.Problems("error", f, nil)
	fmt.Fprintf(p.W, "git-secure: verification FAILED (%d problem(s))\n", len(f.Problems))
}

// Error prints e's message and hint, if it has them.
func (p Printer) Error(e *Error) {
	if e.Msg != "" {
		p.Say("error", "%s", e.Msg)
	}
	if e.Hint != "" {
		p.Say("hint", "%s", e.Hint)
	}
}
