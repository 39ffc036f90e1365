package e2e

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// readmeMarker introduces a README code block the README test runs: an
// HTML comment (invisible on the rendered page) on the line before a
// ```sh fence. See "Editing this README" in README.md for its keys.
var readmeMarker = regexp.MustCompile(`^<!-- readme-test: (.*) -->$`)

// readmeBlock is one marked shell block of README.md.
type readmeBlock struct {
	line    int               // of the fence, 1-based
	attrs   map[string]string // as, exit, edit, commit, pending
	persons []string          // as=alice,bob: run once for each
	script  string
}

// readmeBlocks extracts the marked blocks of a README, in order; a marker
// that is not followed by a ```sh block is an error, so that no block is
// silently dropped.
func readmeBlocks(text string) ([]readmeBlock, error) {
	var blocks []readmeBlock
	sc := bufio.NewScanner(strings.NewReader(text))
	n := 0
	var pending *readmeBlock
	inBlock := false
	var body strings.Builder
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case inBlock && line == "```":
			pending.script = body.String()
			blocks = append(blocks, *pending)
			pending, inBlock = nil, false
			body.Reset()
		case inBlock:
			body.WriteString(line + "\n")
		case pending != nil:
			if line != "```sh" {
				return nil, fmt.Errorf("README line %d: a readme-test marker must be followed by a ```sh block, got %q", n, line)
			}
			pending.line, inBlock = n, true
		default:
			m := readmeMarker.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			b := readmeBlock{attrs: map[string]string{}}
			for _, kv := range strings.Fields(m[1]) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("README line %d: %q is not KEY=VALUE", n, kv)
				}
				b.attrs[k] = v
			}
			if b.attrs["as"] == "" {
				return nil, fmt.Errorf("README line %d: a readme-test marker needs as=PERSON", n)
			}
			b.persons = strings.Split(b.attrs["as"], ",")
			pending = &b
		}
	}
	if pending != nil {
		return nil, fmt.Errorf("README: the last readme-test marker has no complete ```sh block")
	}
	return blocks, sc.Err()
}

// readmePerson is one person of the README: a fresh HOME with
// ~/.ssh/id_ed25519 in an ssh-agent, and the directory their last block
// ended in.
type readmePerson struct {
	u   *user
	cwd string
}

func newReadmePerson(t *testing.T, name string) *readmePerson {
	t.Helper()
	u := newUser(t, name)
	// A fresh HOME: no configuration at all (the README sets what it needs).
	if err := os.Remove(filepath.Join(u.sb.Home, ".gitconfig")); err != nil {
		t.Fatal(err)
	}
	ssh := filepath.Join(u.sb.Home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{u.key.Private, u.key.Public} {
		dst := filepath.Join(ssh, "id_ed25519"+strings.TrimPrefix(f, u.key.Private))
		u.must(u.sb.Home, "cp", f, dst)
	}
	u.sb.StartAgent()
	u.sb.AddToAgent(testutil.Key{Private: filepath.Join(ssh, "id_ed25519")})
	return &readmePerson{u: u, cwd: u.sb.Home}
}

// TestReadme runs README.md's marked shell blocks (quick start and
// walkthroughs) in order, each as the person it names, in fresh HOMEs,
// with the built binary and a local bare repository standing for the
// server: placeholders (URL, ssh://server/srv/git/, "SHA256:…", <commit>)
// are replaced by their local values. Each block must exit 0, or the
// exit=N its marker documents. A block marked pending=ITEM waits for that
// item of issue 15: it runs, and its outcome is logged, not judged.
func TestReadme(t *testing.T) {
	text := readFile(t, filepath.Join("..", "..", "..", "README.md"))
	blocks, err := readmeBlocks(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 8 {
		t.Fatalf("README has %d readme-test blocks; the quick start and walkthroughs have more", len(blocks))
	}

	root := t.TempDir()
	srvDir := filepath.Join(root, "srv", "git")
	persons := map[string]*readmePerson{}
	person := func(name string) *readmePerson {
		if p := persons[name]; p != nil {
			return p
		}
		p := newReadmePerson(t, name)
		persons[name] = p
		return p
	}

	// What the README assumes exists: alice's project with history and
	// a test target, everyone's public keys beside it, an empty bare
	// repository on the server.
	alice := person("alice")
	project := alice.u.path("my-project")
	alice.u.git(alice.u.sb.Home, "init", "-q", "-b", "main", project)
	writeFile(t, project, "Makefile", "test:\n\ttrue\n")
	writeFile(t, project, "README.md", "my project\n")
	alice.u.git(project, "add", "-A")
	alice.u.git(project, "commit", "-q", "-m", "start")
	writeFile(t, project, ".git/info/exclude", "*.pub\n")
	for _, name := range []string{"alice", "bob", "dev1", "dev2", "dev3", "sec1", "sec2", "ci"} {
		var pub string
		if name == "alice" || name == "bob" {
			pub = person(name).u.key.Public
		} else {
			pub = alice.u.sb.NewKey(name, "ed25519").Public
		}
		alice.u.must(project, "cp", pub, name+".pub")
	}
	// The server's repository is the README's own git init --bare, in a
	// fresh HOME (no init.defaultBranch), as on a fresh server: without its
	// -b main the server's HEAD names master and every clone checks out
	// nothing.
	person("admin")
	fpr := alice.u.fingerprint()

	for _, b := range blocks {
		for _, name := range b.persons {
			p := person(name)
			runReadmeBlock(t, b, p, persons, map[string]string{"root": root, "srv": srvDir, "fpr": fpr})
		}
	}
}

// runReadmeBlock runs one block as p, from the directory p's last block
// ended in, with the placeholders replaced.
func runReadmeBlock(t *testing.T, b readmeBlock, p *readmePerson, persons map[string]*readmePerson, v map[string]string) {
	t.Helper()
	subst := []string{
		"ssh://server/srv/git/", "file://" + v["srv"] + "/",
		"https://server/", "file://" + v["srv"] + "/",
		"/srv/git/", v["srv"] + "/",
		"origin URL", "origin file://" + v["srv"] + "/my-project.git",
		`"SHA256:…"`, `"` + v["fpr"] + `"`,
	}
	if who := b.attrs["commit"]; who != "" {
		q := persons[who]
		if q == nil {
			t.Fatalf("README line %d: commit=%s names nobody who ran a block before", b.line, who)
		}
		subst = append(subst, "<commit>", q.u.rev(q.cwd, "HEAD"))
	}
	if at := b.attrs["at"]; at != "" {
		a := persons["alice"]
		subst = append(subst, at, a.u.rev(a.cwd, "refs/heads/main"))
	}
	script := strings.NewReplacer(subst...).Replace(b.script)
	if f := b.attrs["edit"]; f != "" {
		// The change a person makes before committing: the one step a
		// README does not spell as a command.
		writeFile(t, p.cwd, f, readFile(t, filepath.Join(p.cwd, f))+"a change by "+p.u.name+"\n")
	}
	state := filepath.Join(p.u.sb.Home, ".readme-cwd")
	full := "cd " + strconv.Quote(p.cwd) + "\n" + stopAtFirstFailure(script) + "pwd > " + strconv.Quote(state) + "\n"
	r := p.u.run(p.cwd, "bash", "-o", "pipefail", "-c", full)
	want := 0
	if e := b.attrs["exit"]; e != "" {
		want, _ = strconv.Atoi(e)
	}
	switch item := b.attrs["pending"]; {
	case item != "":
		t.Logf("README line %d (as %s) waits for issue 15 item %s: exit %d (want %d)\n%s", b.line, p.u.name, item, r.code, want, r)
	case r.code != want:
		t.Fatalf("README line %d, as %s: exit %d, want %d\n%s", b.line, p.u.name, r.code, want, r)
	case want != 0 && !strings.Contains(r.stderr, "hint: "):
		t.Fatalf("README line %d, as %s: the documented failure does not say what to do (no hint: line)\n%s", b.line, p.u.name, r)
	default:
		t.Logf("README line %d, as %s:\n%s", b.line, p.u.name, r)
	}
	if r.code == 0 {
		if out, err := os.ReadFile(state); err == nil {
			p.cwd = strings.TrimSpace(string(out))
		}
	}
}

// stopAtFirstFailure makes a block stop at its first command line that
// fails, as a reader pasting it line by line would: bash -e would go on
// past "a && b" when a fails, unless it is the block's last line. Lines
// continued with a backslash are one command.
func stopAtFirstFailure(script string) string {
	var out strings.Builder
	var cmd strings.Builder
	for _, line := range strings.Split(script, "\n") {
		cmd.WriteString(line + "\n")
		if strings.HasSuffix(line, "\\") {
			continue
		}
		text := strings.TrimSpace(cmd.String())
		cmd.Reset()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		out.WriteString(text + "\n" + "s=$?; if [ $s -ne 0 ]; then exit $s; fi\n")
	}
	return out.String()
}

func TestReadmeBlocks(t *testing.T) {
	const good = "text\n<!-- readme-test: as=alice,bob exit=1 -->\n```sh\ngit a \\\n  --b\n# note\ngit c && git d\n```\n```sh\nnot marked\n```\n"
	blocks, err := readmeBlocks(good)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 1 || blocks[0].line != 3 || blocks[0].attrs["exit"] != "1" || strings.Join(blocks[0].persons, " ") != "alice bob" {
		t.Fatalf("readmeBlocks = %+v", blocks)
	}
	if got, want := stopAtFirstFailure(blocks[0].script), "git a \\\n  --b\ns=$?; if [ $s -ne 0 ]; then exit $s; fi\ngit c && git d\ns=$?; if [ $s -ne 0 ]; then exit $s; fi\n"; got != want {
		t.Errorf("stopAtFirstFailure = %q, want %q", got, want)
	}
	for _, bad := range []string{
		"<!-- readme-test: as=alice -->\ntext\n",          // no block after it
		"<!-- readme-test: exit=1 -->\n```sh\nx\n```\n",   // nobody to run it
		"<!-- readme-test: as=alice -->\n```sh\nx\n",      // unterminated
		"<!-- readme-test: as=alice oops -->\n```sh\n```", // not KEY=VALUE
	} {
		if _, err := readmeBlocks(bad); err == nil {
			t.Errorf("readmeBlocks(%q) accepted it", bad)
		}
	}
}

// A stranger's first make install took 5.5 minutes in silence (the module
// cache was cold): the README says what it does and how long, and make
// says so in one line when the modules are not there yet.
func TestReadmeSaysFirstBuildTakesMinutes(t *testing.T) {
	readme := readFile(t, filepath.Join("..", "..", "..", "README.md"))
	flat := strings.Join(strings.Fields(readme), " ")
	for _, want := range []string{"The first build on a machine takes minutes", "go downloads the modules `go.sum` pins", "Later builds reuse both caches"} {
		if !strings.Contains(flat, want) {
			t.Errorf("README does not say %q", want)
		}
	}
	makefile := readFile(t, filepath.Join("..", "..", "..", "Makefile"))
	_, build, _ := strings.Cut(makefile, "\nbuild:")
	build, _, _ = strings.Cut(build, "\n\n")
	if !strings.Contains(build, "GOMODCACHE") || !strings.Contains(build, "first build on this machine") {
		t.Errorf("make build does not say, on a cold module cache, that the first build takes minutes:\n%s", build)
	}
}
