package display

import (
	"fmt"
	"io"
	"strings"
)

// Width is the column count messages are wrapped to: long enough for a
// hash and a ref on one line, short enough for a terminal beside an
// editor.
const Width = 100

// Wrap returns msg as lines of at most width columns, each starting with
// prefix; continuation lines are indented two more spaces. A command that
// the message hands the user (the text after ": git ") goes on a line of
// its own and is never broken, so that it can be copied whole. Words
// longer than a line stay whole. The result ends with a newline.
func Wrap(prefix, msg string, width int) string {
	var b strings.Builder
	for _, para := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
		head, cmd := para, ""
		if i := strings.Index(para, ": git "); i >= 0 {
			head, cmd = para[:i+1], para[i+2:]
		}
		wrapWords(&b, prefix, head, width)
		if cmd != "" {
			b.WriteString(prefix + "  " + cmd + "\n")
		}
	}
	return b.String()
}

func wrapWords(b *strings.Builder, prefix, text string, width int) {
	words := strings.Fields(text)
	if len(words) == 0 {
		b.WriteString(strings.TrimRight(prefix, " ") + "\n")
		return
	}
	line := prefix + words[0]
	for _, w := range words[1:] {
		if len(line)+1+len(w) > width {
			b.WriteString(line + "\n")
			line = prefix + "  " + w
			continue
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}

// Fprintw is Fprintf of one message, escaped like Fprintf, then wrapped
// with Wrap to Width less reserve columns (what a transport adds in front,
// such as git's "remote: ").
func Fprintw(w io.Writer, reserve int, prefix, format string, args ...any) (int, error) {
	msg := Text(fmt.Sprintf(format, Args(args)...))
	return io.WriteString(w, Wrap(prefix, msg, Width-reserve))
}
