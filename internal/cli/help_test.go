package cli

// Help as git users know it (issue 15.8): --version, usage and exit 2
// without a command, "git secure help [COMMAND...]", "did you mean" for a
// mistyped command, man pages that "git secure --help" opens, and bash and
// zsh completion hooked into git's own.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/cli/helpcmd"
	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// runHelp runs Main outside any repository: none of these commands opens
// one.
func runHelp(t *testing.T, args ...string) CLIResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := Env{
		Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(string) string { return "" },
		Now:    func() time.Time { return CLINow },
		Dir:    t.TempDir(),
	}
	code := Main(append([]string{"git-secure"}, args...), env)
	return CLIResult{Args: args, Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

func wantHelp(t *testing.T, code int, args ...string) CLIResult {
	t.Helper()
	r := runHelp(t, args...)
	if r.Code != code {
		t.Fatalf("want exit %d:\n%s", code, r)
	}
	return r
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		r := wantHelp(t, ExitOK, args...)
		if r.Stdout != "git-secure version "+Version+"\n" || r.Stderr != "" {
			t.Errorf("version output:\n%s", r)
		}
	}
}

// TestNoCommand: git-secure (or a command group) without a command prints
// the short usage on stderr and exits 2, as a usage error.
func TestNoCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"usage: git secure <command>", "verify", "policy", "git secure help <command>"}},
		{[]string{"policy"}, []string{"usage: git secure policy <command>", "add-rule", "apply", "'git secure help policy <command>'"}},
		{[]string{"trust"}, []string{"usage: git secure trust <command>", "revoke-key"}},
	} {
		r := wantHelp(t, ExitUsage, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.Stderr, w) {
				t.Errorf("want %q in stderr:\n%s", w, r)
			}
		}
		if r.Stdout != "" || strings.Contains(r.Stderr, "\n   hook ") {
			t.Errorf("usage on stdout, or the hidden hook command shown:\n%s", r)
		}
	}
}

// TestHelpCommand: "help", "help verify" and "help policy add-rule" print
// the built-in help, the same text as "-h".
func TestHelpCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"help"}, []string{"git secure - who may move", "verify", "--version"}},
		{[]string{"help", "verify"}, []string{"git secure verify - ", "--json", "--remote"}},
		{[]string{"help", "policy"}, []string{"git secure policy - ", "add-rule"}},
		{[]string{"help", "policy", "add-rule"}, []string{"git secure policy add-rule - ", "--threshold", "--path"}},
	} {
		r := wantHelp(t, ExitOK, tc.args...)
		for _, w := range tc.want {
			if !strings.Contains(r.Stdout, w) {
				t.Errorf("want %q in stdout:\n%s", w, r)
			}
		}
		if strings.Contains(r.Stdout+r.Stderr, "No help topic") {
			t.Errorf("urfave/cli's help topic error:\n%s", r)
		}
		dashH := wantHelp(t, ExitOK, append(tc.args[1:], "-h")...)
		if dashH.Stdout != r.Stdout {
			t.Errorf("help %v differs from -h:\n%s\n%s", tc.args[1:], r, dashH)
		}
	}
}

// TestMistypedCommand: an unknown command exits 2 and names the closest
// command, at the top and in a group, and after "help".
func TestMistypedCommand(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		err      string
		wantHint string // "" = no suggestion
	}{
		{[]string{"verfy"}, "git secure: 'verfy' is not a command", "did you mean 'git secure verify'?"},
		{[]string{"polcy", "list"}, "'polcy' is not a command", "did you mean 'git secure policy'?"},
		{[]string{"policy", "add-rul", "x"}, "git secure policy: 'add-rul' is not a command", "did you mean 'git secure policy add-rule'?"},
		{[]string{"rsl", "lg"}, "git secure rsl: 'lg' is not a command", "did you mean 'git secure rsl log'?"},
		{[]string{"help", "verfy"}, "'verfy' is not a command", "did you mean 'git secure verify'?"},
		{[]string{"help", "policy", "sing"}, "git secure policy: 'sing' is not a command", "did you mean 'git secure policy sign'?"},
		{[]string{"zzzzzzzz"}, "'zzzzzzzz' is not a command", ""},
		{[]string{"hook"}, "", ""}, // hidden, but a real command: not a typo
	} {
		r := runHelp(t, tc.args...)
		if r.Code != ExitUsage {
			t.Errorf("want exit 2:\n%s", r)
		}
		if !strings.Contains(r.Stderr, tc.err) {
			t.Errorf("want %q:\n%s", tc.err, r)
		}
		if hint := strings.Contains(r.Stderr, "did you mean"); hint != (tc.wantHint != "") || !strings.Contains(r.Stderr, tc.wantHint) {
			t.Errorf("want hint %q:\n%s", tc.wantHint, r)
		}
	}
}

// commandPaths lists every visible command path: "verify", "policy add-rule".
func commandPaths(t *testing.T) [][]string {
	t.Helper()
	a := newApp(factory.New(Env{Getenv: func(string) string { return "" }}, Version))
	var out [][]string
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range helpcmd.VisibleCommands(cmds) {
			p := append(append([]string(nil), path...), c.Name)
			out = append(out, p)
			walk(p, c.Subcommands)
		}
	}
	walk(nil, a.cliApp().Commands)
	if len(out) < 30 {
		t.Fatalf("only %d commands found: %v", len(out), out)
	}
	return out
}

// TestManPages: one page per command, each with the sections man expects,
// and roff that groff renders without a warning.
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	r := wantHelp(t, ExitOK, "man", "--dir", dir)
	if !strings.Contains(r.Stderr, "manual pages to "+dir) {
		t.Errorf("man output:\n%s", r)
	}
	root, err := os.ReadFile(filepath.Join(dir, "git-secure.1"))
	if err != nil {
		t.Fatal(err)
	}
	paths := commandPaths(t)
	files := []string{"git-secure.1"}
	for _, p := range paths {
		files = append(files, helpcmd.ManName(p)+".1")
		if len(p) == 1 && !strings.Contains(string(root), `.B `+helpcmd.Roff(p[0])+"\n") {
			t.Errorf("git-secure.1 does not list %s", p[0])
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(files) {
		t.Errorf("%d pages for %d commands (+1)", len(entries), len(paths))
	}
	groff, _ := exec.LookPath("groff")
	for _, f := range files {
		page, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(f, ".1")
		for _, w := range []string{".TH " + helpcmd.Roff(strings.ToUpper(name)) + " 1 ", ".SH NAME\n" + helpcmd.Roff(name) + ` \- `, ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH \"SEE ALSO\"\n"} {
			if !strings.Contains(string(page), w) {
				t.Errorf("%s: no %q", f, w)
			}
		}
		for i, l := range strings.Split(string(page), "\n") {
			if strings.HasPrefix(l, "'") || strings.HasPrefix(l, ".") && !manMacro(l) {
				t.Errorf("%s:%d: a text line read as a request: %q", f, i+1, l)
			}
		}
		if groff == "" {
			continue
		}
		cmd := exec.Command(groff, "-man", "-Tascii", "-ww", "-z", filepath.Join(dir, f))
		if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("groff %s: %v\n%s", f, err, out)
		}
	}
	addRule, _ := os.ReadFile(filepath.Join(dir, "git-secure-policy-add-rule.1"))
	if !strings.Contains(string(addRule), `.B \-\-threshold N`) || !strings.Contains(string(addRule), `\fBgit\-secure\-policy\fR(1)`) {
		t.Errorf("add-rule page:\n%s", addRule)
	}
}

// manMacro reports whether a line starting with "." is one of the requests
// the generator writes.
func manMacro(l string) bool {
	name, _, _ := strings.Cut(l[1:], " ")
	switch name {
	case "TH", "SH", "PP", "TP", "B", "RS", "RE", "nf", "fi", "nh", "ad", "br":
		return true
	}
	return false
}

// TestGitSecureHelpOpensManPage: git turns "git secure --help" into
// "git help secure", which runs "man git-secure"; with the generated pages
// on MANPATH it shows git-secure(1). "git secure -h" is the built-in help,
// man page or not, and "git secure" alone exits 2 through git.
func TestGitSecureHelpOpensManPage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("no man on this machine")
	}
	bin := t.TempDir()
	if err := testutil.BuildBinary(bin); err != nil {
		t.Fatal(err)
	}
	manDir := filepath.Join(t.TempDir(), "man")
	wantHelp(t, ExitOK, "man", "--dir", filepath.Join(manDir, "man1"))
	s := testutil.NewSandbox(t)
	s.Extra = []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "MANPATH=" + manDir, "MANPAGER=cat", "PAGER=cat", "MANWIDTH=80"}

	for _, args := range [][]string{{"secure", "--help"}, {"help", "secure"}, {"help", "git-secure-policy-add-rule"}} {
		out, err := s.RunErr(s.Home, nil, "git", args...)
		name := "git-secure"
		if len(args) == 2 && strings.HasPrefix(args[1], "git-secure-") {
			name = args[1]
		}
		if err != nil || !strings.Contains(out, strings.ToUpper(name)+"(1)") || !strings.Contains(out, "SYNOPSIS") {
			t.Errorf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	// Without the pages: -h is git-secure's own help.
	s.Extra = append(s.Extra, "MANPATH="+t.TempDir())
	out, err := s.RunErr(s.Home, nil, "git", "secure", "-h")
	if err != nil || !strings.Contains(out, "git secure - who may move") {
		t.Errorf("git secure -h: %v\n%s", err, out)
	}
	out, err = s.RunErr(s.Home, nil, "git", "secure")
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != ExitUsage || !strings.Contains(err.Error(), "usage: git secure <command>") {
		t.Errorf("git secure: want exit 2 with usage, got %v\n%s", err, out)
	}
}

// gitBashCompletion is git's own bash completion, as distributions ship it.
const gitBashCompletion = "/usr/share/bash-completion/completions/git"

// TestCompletionBash: the script defines _git_secure, which git's
// completion calls for "git secure <TAB>", and completes git-secure
// itself; both complete commands at any depth and a command's flags.
func TestCompletionBash(t *testing.T) {
	r := wantHelp(t, ExitOK, "completion", "bash")
	for _, p := range commandPaths(t) {
		if !strings.Contains(r.Stdout, "\""+helpcmd.CompletionPath(strings.Join(p, " "))+"\")") {
			t.Errorf("no case for %v", p)
		}
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "git-secure.bash")
	if err := os.WriteFile(script, []byte(r.Stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	// t WORD... completes the last word, as bash does on TAB, through
	// git's completion when it is installed, and through the script's own
	// "complete -F" for git-secure.
	driver := `source "$1"
t () {
	COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
	if [ "$1" = git ]; then __git_wrap__git_main; else _git_secure_standalone; fi
	local IFS=' '; echo "$*|${COMPREPLY[*]}"
}
`
	cases := map[string]string{
		"git-secure pol":                   "policy",
		"git-secure policy add-r":          "add-rule",
		"git-secure rsl ":                  "record skip log repair",
		"git-secure verify --js":           "--json",
		"git-secure policy add-rule x --t": "--threshold= --tree-approvals",
		"git-secure help pol":              "policy",
		"git-secure completion ":           "bash zsh",
	}
	if _, err := os.Stat(gitBashCompletion); err == nil {
		driver = "source " + gitBashCompletion + "\n" + driver
		cases["git secure pol"] = "policy"
		cases["git secure ver"] = "verify version"
		cases["git -C . secure attest ap"] = "approve"
		cases["git secure verify --rem"] = "--remote="
		cases["git secure explain ma"] = "main"
		cases["git secure rsl record v1"] = "v1.0"
	} else {
		t.Logf("%s not installed: only git-secure <TAB> is checked", gitBashCompletion)
	}
	var lines []string
	for words := range cases {
		w := strings.Fields(words)
		if strings.HasSuffix(words, " ") {
			w = append(w, "")
		}
		for i := range w {
			w[i] = "'" + w[i] + "'"
		}
		lines = append(lines, "t "+strings.Join(w, " "))
	}
	if err := os.WriteFile(filepath.Join(dir, "driver.bash"), []byte(driver+strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// In a repository with main and v1.0, for the refs.
	s := testutil.NewSandbox(t)
	repo := s.InitRepo("repo", 1)
	s.Git(repo, "tag", "v1.0")
	out, err := s.RunErr(repo, nil, bash, filepath.Join(dir, "driver.bash"), script)
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		words, reply, ok := strings.Cut(l, "|")
		if !ok {
			t.Fatalf("bash printed %q:\n%s", l, out)
		}
		got[strings.TrimSpace(words)] = strings.Join(strings.Fields(reply), " ")
	}
	for words, want := range cases {
		if got[strings.TrimSpace(words)] != want {
			t.Errorf("%q<TAB> = %q, want %q", words, got[strings.TrimSpace(words)], want)
		}
	}
}

// TestCompletionZsh: the script is what zsh's _git calls (_git-secure,
// #compdef git-secure) and knows every command; zsh -n checks its syntax
// when zsh is installed.
func TestCompletionZsh(t *testing.T) {
	r := wantHelp(t, ExitOK, "completion", "zsh")
	if !strings.HasPrefix(r.Stdout, "#compdef git-secure\n") || !strings.Contains(r.Stdout, "\n_git-secure () {\n") {
		t.Errorf("not a zsh completion function:\n%s", r.Stdout)
	}
	for _, p := range commandPaths(t) {
		leaf := p[len(p)-1]
		if !strings.Contains(r.Stdout, "("+helpcmd.ZshQuote(helpcmd.CompletionPath(strings.Join(p, " ")))+")") || !strings.Contains(r.Stdout, "'"+leaf+":") {
			t.Errorf("%v missing", p)
		}
	}
	for _, w := range []string{"(--help --version)", "--threshold", "compdef _git-secure git-secure", "'hooks:install or remove git-secure'\\''s hooks"} {
		if !strings.Contains(r.Stdout, w) {
			t.Errorf("no %q", w)
		}
	}
	if zsh, err := exec.LookPath("zsh"); err == nil {
		f := filepath.Join(t.TempDir(), "_git-secure")
		if err := os.WriteFile(f, []byte(r.Stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(zsh, "-n", f).CombinedOutput(); err != nil {
			t.Errorf("zsh -n: %v\n%s", err, out)
		}
	}
	wantHelp(t, ExitUsage, "completion", "fish")
	wantHelp(t, ExitUsage, "completion")
}
