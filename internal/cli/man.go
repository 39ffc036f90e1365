package cli

// Manual pages in roff, generated from the command definitions: git runs
// "man git-secure" for "git secure --help" and "git help secure", so
// "make install" writes git-secure(1) and one page per command
// (git-secure-verify(1), git-secure-policy-add-rule(1), ...) to
// PREFIX/share/man/man1. urfave/cli's own generator is left out of the
// build (tag urfave_cli_no_docs): its markdown parser would initialise at
// every start of the binary.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// manCommand is the hidden "git secure man --dir DIR" used by the Makefile.
func (a *app) manCommand() *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "write the manual pages (roff) into a directory",
		Hidden: true,
		Flags:  []cli.Flag{&cli.StringFlag{Name: "dir", Usage: "write the pages into `DIR`", Required: true}},
		Action: func(c *cli.Context) error {
			pages := manPages(c.App)
			dir := c.String("dir")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return usageErr("man: %v", err)
			}
			for _, p := range pages {
				if err := os.WriteFile(filepath.Join(dir, p.file), []byte(p.text), 0o644); err != nil {
					return usageErr("man: %v", err)
				}
			}
			a.info("git-secure: wrote %d manual pages to %s\n", len(pages), dir)
			return nil
		},
	}
}

// manPage is one generated page: its file name and its roff text.
type manPage struct{ file, text string }

// manPages renders git-secure(1) and a page for every visible command at
// any depth.
func manPages(app *cli.App) []manPage {
	pages := []manPage{{"git-secure.1", rootManPage(app)}}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range visibleCommands(cmds) {
			p := append(append([]string(nil), path...), c.Name)
			pages = append(pages, manPage{manName(p) + ".1", commandManPage(p, c)})
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	return pages
}

// manName is the page name of a command path: git-secure-policy-add-rule.
func manName(path []string) string {
	return strings.Join(append([]string{"git-secure"}, path...), "-")
}

func rootManPage(app *cli.App) string {
	var b strings.Builder
	manHeader(&b, "git-secure", app.Usage)
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B git secure\n%s\n", roff("[--version] [-h | --help] <command> [<args>]"))
	b.WriteString(".SH DESCRIPTION\n")
	manText(&b, app.Description)
	manCommands(&b, nil, app.Commands)
	manFlags(&b, app.VisibleFlags())
	b.WriteString(".SH \"EXIT STATUS\"\n")
	manText(&b, "0: verified or done. 1: a check failed or a change was refused. 2: usage or environment error (no command, unknown command or flag, missing key, not a repository). 130: interrupted.")
	b.WriteString(".SH \"SEE ALSO\"\n")
	var refs []string
	for _, c := range visibleCommands(app.Commands) {
		refs = append(refs, manRef(manName([]string{c.Name})))
	}
	refs = append(refs, manRef("git"), manRef("git-remote-helpers"))
	b.WriteString(strings.Join(refs, ",\n") + "\n")
	return b.String()
}

func commandManPage(path []string, c *cli.Command) string {
	var b strings.Builder
	manHeader(&b, manName(path), c.Usage)
	b.WriteString(".SH SYNOPSIS\n")
	synopsis := "[options]"
	if len(c.Subcommands) > 0 {
		synopsis = "<command> [<args>]"
	} else if c.ArgsUsage != "" {
		synopsis += " " + c.ArgsUsage
	}
	fmt.Fprintf(&b, ".B git secure %s\n%s\n", roff(strings.Join(path, " ")), roff(synopsis))
	b.WriteString(".SH DESCRIPTION\n")
	if c.Description != "" {
		manText(&b, c.Description)
	} else {
		manText(&b, c.Usage+".")
	}
	manCommands(&b, path, c.Subcommands)
	manFlags(&b, c.VisibleFlags())
	b.WriteString(".SH \"SEE ALSO\"\n")
	refs := []string{manRef("git-secure")}
	if len(path) > 1 {
		refs = append(refs, manRef(manName(path[:len(path)-1])))
	}
	b.WriteString(strings.Join(refs, ",\n") + "\n")
	return b.String()
}

// manHeader writes the title line and NAME. The date is left out so that
// the pages of one version are the same bytes on every build.
func manHeader(b *strings.Builder, name, usage string) {
	fmt.Fprintf(b, ".TH %s 1 \"\" %s \"Git Manual\"\n", roff(strings.ToUpper(name)), roffQuote("git-secure "+Version))
	b.WriteString(".nh\n.ad l\n")
	fmt.Fprintf(b, ".SH NAME\n%s \\- %s\n", roff(name), roff(usage))
}

func manCommands(b *strings.Builder, path []string, cmds []*cli.Command) {
	cmds = visibleCommands(cmds)
	if len(cmds) == 0 {
		return
	}
	b.WriteString(".SH COMMANDS\n")
	for _, c := range cmds {
		p := append(append([]string(nil), path...), c.Name)
		fmt.Fprintf(b, ".TP\n.B %s\n%s (%s)\n", roff(c.Name), roff(c.Usage), manRef(manName(p)))
	}
}

func manFlags(b *strings.Builder, flags []cli.Flag) {
	if len(flags) == 0 {
		return
	}
	b.WriteString(".SH OPTIONS\n")
	help := false
	for _, f := range flags {
		// String() is urfave/cli's "--key FILE\tsigning key FILE: ..."
		// (the placeholder taken out of the usage's backquotes).
		names, usage, _ := strings.Cut(f.String(), "\t")
		usage = strings.TrimSuffix(usage, " (default: false)")
		fmt.Fprintf(b, ".TP\n.B %s\n%s\n", roff(strings.TrimSpace(names)), roff(usage))
		help = help || f.Names()[0] == "help"
	}
	if !help {
		b.WriteString(".TP\n.B \\-h, \\-\\-help\nshow the built-in help\n")
	}
}

// manText writes paragraphs: blank lines separate them, and indented
// lines (examples, commands) are kept as they are written.
func manText(b *strings.Builder, text string) {
	for _, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		b.WriteString(".PP\n")
		indented := false
		for _, l := range strings.Split(strings.Trim(para, "\n"), "\n") {
			in := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
			switch {
			case in && !indented:
				b.WriteString(".RS 4\n.nf\n")
			case !in && indented:
				b.WriteString(".fi\n.RE\n")
			}
			indented = in
			if in {
				l = strings.TrimPrefix(strings.TrimPrefix(l, "\t"), "   ")
			}
			b.WriteString(roffLine(l) + "\n")
		}
		if indented {
			b.WriteString(".fi\n.RE\n")
		}
	}
}

// manRef is a reference to another page: \fBgit-secure-verify\fR(1).
func manRef(name string) string { return `\fB` + roff(name) + `\fR(1)` }

// roff escapes text for a roff line: backslashes, and hyphens as \- so
// that options and command names render as ASCII hyphens one can copy.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// roffLine escapes one line of text, which must not start with a control
// character (. or ').
func roffLine(s string) string {
	s = roff(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffQuote is a quoted macro argument.
func roffQuote(s string) string {
	return `"` + strings.ReplaceAll(roff(s), `"`, `\(dq`) + `"`
}
