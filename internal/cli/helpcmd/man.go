package helpcmd

// Manual pages in roff, generated from the command definitions: git runs
// "man git-secure" for "git secure --help" and "git help secure", so
// "make install" writes git-secure(1) and one page per command
// (git-secure-verify(1), git-secure-policy-add-rule(1), ...) to
// PREFIX/share/man/man1. urfave/cli's own generator is left out of the
// build (tag urfave_cli_no_docs): its markdown parser would initialise at
// every start of the binary.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/report"
)

// NewCmdMan is the hidden "git secure man --dir DIR" the Makefile runs.
func NewCmdMan(f *factory.Factory) *cli.Command {
	return &cli.Command{
		Name:   "man",
		Usage:  "write the manual pages (roff) into a directory",
		Hidden: true,
		Flags:  []cli.Flag{&cli.StringFlag{Name: "dir", Usage: "write the pages into `DIR`", Required: true}},
		Action: func(c *cli.Context) error {
			return runMan(c.Context, &ManOptions{F: f, App: c.App, Dir: c.String("dir")})
		},
	}
}

// ManOptions are what man writes: the pages of App into Dir.
type ManOptions struct {
	F   *factory.Factory
	App *cli.App
	Dir string
}

func runMan(_ context.Context, opts *ManOptions) error {
	pages := manPages(opts.App, opts.F.Version)
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return report.Usagef("man: %v", err)
	}
	for _, p := range pages {
		if err := os.WriteFile(filepath.Join(opts.Dir, p.file), []byte(p.text), 0o644); err != nil {
			return report.Usagef("man: %v", err)
		}
	}
	opts.F.Info("git-secure: wrote %d manual pages to %s\n", len(pages), opts.Dir)
	return nil
}

// manPage is one generated page: its file name and its roff text.
type manPage struct{ file, text string }

// manPages renders git-secure(1) and a page for every visible command at
// any depth.
func manPages(app *cli.App, version string) []manPage {
	pages := []manPage{{"git-secure.1", rootManPage(app, version)}}
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range VisibleCommands(cmds) {
			p := append(append([]string(nil), path...), c.Name)
			pages = append(pages, manPage{ManName(p) + ".1", commandManPage(p, c, version)})
			walk(p, c.Subcommands)
		}
	}
	walk(nil, app.Commands)
	return pages
}

// ManName is the page name of a command path: git-secure-policy-add-rule.
func ManName(path []string) string {
	return strings.Join(append([]string{"git-secure"}, path...), "-")
}

func rootManPage(app *cli.App, version string) string {
	var b strings.Builder
	manHeader(&b, "git-secure", app.Usage, version)
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B git secure\n%s\n", Roff("[--version] [-h | --help] <command> [<args>]"))
	b.WriteString(".SH DESCRIPTION\n")
	manText(&b, app.Description)
	manCommands(&b, nil, app.Commands)
	manFlags(&b, app.VisibleFlags())
	b.WriteString(".SH \"EXIT STATUS\"\n")
	manText(&b, "0: verified or done. 1: a check failed or a change was refused. 2: usage or environment error (no command, unknown command or flag, missing key, not a repository). 130: interrupted.")
	b.WriteString(".SH \"SEE ALSO\"\n")
	var refs []string
	for _, c := range VisibleCommands(app.Commands) {
		refs = append(refs, manRef(ManName([]string{c.Name})))
	}
	refs = append(refs, manRef("git"), manRef("git-remote-helpers"))
	b.WriteString(strings.Join(refs, ",\n") + "\n")
	return b.String()
}

func commandManPage(path []string, c *cli.Command, version string) string {
	var b strings.Builder
	manHeader(&b, ManName(path), c.Usage, version)
	b.WriteString(".SH SYNOPSIS\n")
	synopsis := "[options]"
	if len(c.Subcommands) > 0 {
		synopsis = "<command> [<args>]"
	} else if c.ArgsUsage != "" {
		synopsis += " " + c.ArgsUsage
	}
	fmt.Fprintf(&b, ".B git secure %s\n%s\n", Roff(strings.Join(path, " ")), Roff(synopsis))
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
		refs = append(refs, manRef(ManName(path[:len(path)-1])))
	}
	b.WriteString(strings.Join(refs, ",\n") + "\n")
	return b.String()
}

// manHeader writes the title line and NAME. The date is left out so that
// the pages of one version are the same bytes on every build.
func manHeader(b *strings.Builder, name, usage, version string) {
	fmt.Fprintf(b, ".TH %s 1 \"\" %s \"Git Manual\"\n", Roff(strings.ToUpper(name)), roffQuote("git-secure "+version))
	b.WriteString(".nh\n.ad l\n")
	fmt.Fprintf(b, ".SH NAME\n%s \\- %s\n", Roff(name), Roff(usage))
}

func manCommands(b *strings.Builder, path []string, cmds []*cli.Command) {
	cmds = VisibleCommands(cmds)
	if len(cmds) == 0 {
		return
	}
	b.WriteString(".SH COMMANDS\n")
	for _, c := range cmds {
		p := append(append([]string(nil), path...), c.Name)
		fmt.Fprintf(b, ".TP\n.B %s\n%s (%s)\n", Roff(c.Name), Roff(c.Usage), manRef(ManName(p)))
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
		fmt.Fprintf(b, ".TP\n.B %s\n%s\n", Roff(strings.TrimSpace(names)), Roff(usage))
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
func manRef(name string) string { return `\fB` + Roff(name) + `\fR(1)` }

// Roff escapes text for a roff line: backslashes, and hyphens as \- so
// that options and command names render as ASCII hyphens one can copy.
func Roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// roffLine escapes one line of text, which must not start with a control
// character (. or ').
func roffLine(s string) string {
	s = Roff(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffQuote is a quoted macro argument.
func roffQuote(s string) string {
	return `"` + strings.ReplaceAll(Roff(s), `"`, `\(dq`) + `"`
}
