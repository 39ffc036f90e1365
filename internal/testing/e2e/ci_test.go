package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/policy"
)

// ciScript is the script every step of action.yml and the GitLab template
// runs.
func ciScript(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../../install/ci/git-secure-ci.sh")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkoutLikeActions makes the clone actions/checkout makes by default:
// git init, one commit fetched at depth 1, checked out, no tags, nothing
// else. It returns the directory.
func checkoutLikeActions(u *user, url, name, sha, ref string) string {
	d := u.path(name)
	u.git(u.sb.Home, "init", "-q", d)
	u.git(d, "remote", "add", "origin", url)
	u.git(d, "-c", "protocol.version=2", "fetch", "--no-tags", "--prune", "--no-recurse-submodules", "--depth=1", "origin", "+"+sha+":"+ref)
	u.git(d, "checkout", "--progress", "--force", sha)
	return d
}

// runCI runs one step of the CI script in dir with the CI's environment.
func runCI(u *user, dir string, env []string, step string) result {
	saved := u.sb.Extra
	u.sb.Extra = append(append([]string{}, saved...), env...)
	defer func() { u.sb.Extra = saved }()
	return u.run(dir, "bash", ciScript(u.t.(*testing.T)), step)
}

// Issue 17 item 1: the CI check in a fresh depth-1 clone made the way
// actions/checkout makes it: on push it fetches what verification needs
// and passes; on a pull request it says whether merging is allowed and who
// must still approve, in the job summary, and passes once they have; a
// server-side move nobody recorded fails it.
func TestCIActionShallowCheckout(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("ci.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-rule", "docs", "--ref", "refs/heads/main", "--path", "doc/**", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	if err := os.MkdirAll(filepath.Join(dir, "doc"), 0o755); err != nil {
		t.Fatal(err)
	}
	alice.commit(dir, "doc/f.txt", "a\n")
	alice.git(dir, "push", "-q", "origin", "main")
	ci := newUser(t, "ci")
	main := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/heads/main"))

	// push: verify the server's state from a depth-1 checkout of main.
	summary := ci.path("summary-push.md")
	d := checkoutLikeActions(ci, url, "push", main, "refs/remotes/origin/main")
	if got := ci.git(d, "rev-parse", "--is-shallow-repository"); got != "true" {
		t.Fatalf("the checkout is not shallow: %s", got)
	}
	if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
		t.Fatalf("fetch step:\n%s", r)
	}
	env := []string{"GITHUB_EVENT_NAME=push", "GITHUB_SHA=" + main, "GITHUB_STEP_SUMMARY=" + summary}
	if r := runCI(ci, d, env, "verify"); r.code != 0 || !strings.Contains(r.stderr, "verified") {
		t.Fatalf("verify step on push:\n%s", r)
	}
	if s := readFile(t, summary); !strings.Contains(s, "### git-secure: origin verified") {
		t.Fatalf("push summary:\n%s", s)
	}

	// pull_request: a change of doc/ on a review branch needs alice (rule
	// docs, threshold 1), and a merge button signs as nobody.
	w := dir
	alice.git(w, "checkout", "-q", "-b", "review/doc")
	head := alice.commit(w, "doc/f.txt", "from the pull request\n")
	alice.git(w, "push", "-q", "origin", "HEAD:refs/heads/review/doc")

	prEnv := func(summary string) []string {
		return []string{"GITHUB_EVENT_NAME=pull_request", "GITHUB_BASE_REF=main", "GITHUB_SHA=" + head, "GITHUB_STEP_SUMMARY=" + summary}
	}
	summary = ci.path("summary-pr1.md")
	d = checkoutLikeActions(ci, url, "pr1", head, "refs/remotes/pull/1/merge")
	if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
		t.Fatalf("fetch step on a pull request:\n%s", r)
	}
	r := runCI(ci, d, prEnv(summary), "verify")
	s := readFile(t, summary)
	if r.code != 1 || !strings.Contains(r.stderr, "result: NOT satisfied") {
		t.Fatalf("the pull request lacks alice's approval, the check must fail:\n%s\nsummary:\n%s", r, s)
	}
	for _, want := range []string{
		"**not mergeable yet**", "| rule | needs | signed or approved | missing | to fix |",
		"| docs |", "1 more needed", "`alice can approve with: git secure attest approve refs/heads/main --from ",
		"--to " + head + "`", "Signer: nobody (merge button)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the pull request summary does not say %q:\n%s", want, s)
		}
	}

	// alice approves exactly that update; a fresh checkout passes.
	alice.secure(w, "attest", "approve", "main", "--to", head)
	alice.git(w, "push", "-q", "origin", "refs/secure/attestations")
	summary = ci.path("summary-pr2.md")
	d = checkoutLikeActions(ci, url, "pr2", head, "refs/remotes/pull/1/merge")
	if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
		t.Fatalf("fetch step:\n%s", r)
	}
	if r := runCI(ci, d, prEnv(summary), "verify"); r.code != 0 {
		t.Fatalf("approved pull request:\n%s\nsummary:\n%s", r, readFile(t, summary))
	}
	if s := readFile(t, summary); !strings.Contains(s, "**mergeable**") || !strings.Contains(s, "| docs |") || !strings.Contains(s, "alice") {
		t.Fatalf("approved pull request summary:\n%s", s)
	}

	// The server moves main without an entry (an admin, or a merge button
	// on a forge without the hook): a fresh checkout fails the check.
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", head)
	summary = ci.path("summary-moved.md")
	d = checkoutLikeActions(ci, url, "moved", head, "refs/remotes/origin/main")
	if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
		t.Fatalf("fetch step:\n%s", r)
	}
	env = []string{"GITHUB_EVENT_NAME=push", "GITHUB_SHA=" + head, "GITHUB_STEP_SUMMARY=" + summary}
	r = runCI(ci, d, env, "verify")
	if s := readFile(t, summary); r.code != 1 || !strings.Contains(r.stderr, "refs/heads/main") || !strings.Contains(s, "does NOT verify (exit 1)") {
		t.Fatalf("a server-side move nobody recorded must fail the check:\n%s\nsummary:\n%s", r, s)
	}
}

// The install step takes a release binary only when it matches the
// release's SHA256SUMS.
func TestCIActionInstallRelease(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("the install step runs under bash on linux and macOS runners")
	}
	bin, err := os.ReadFile(filepath.Join(binDir, "git-secure"))
	if err != nil {
		t.Fatal(err)
	}
	name := "git-secure-" + runtime.GOOS + "-" + runtime.GOARCH
	sum := sha256.Sum256(bin)
	files := map[string][]byte{name: bin, "SHA256SUMS": []byte(hex.EncodeToString(sum[:]) + "  " + name + "\n")}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[strings.TrimPrefix(r.URL.Path, "/v1/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	defer srv.Close()
	ci := newUser(t, "ci")
	into := ci.path("bin")
	env := []string{"GIT_SECURE_RELEASE_URL=" + srv.URL + "/v1", "GIT_SECURE_INSTALL_DIR=" + into, "GITHUB_PATH=" + ci.path("github-path")}
	r := runCI(ci, ci.sb.Home, env, "install")
	if r.code != 0 || r.stdout != into || !strings.Contains(r.stderr, "git-secure version") {
		t.Fatalf("install:\n%s", r)
	}
	if got := strings.TrimSpace(readFile(t, ci.path("github-path"))); got != into {
		t.Fatalf("GITHUB_PATH has %q, want %q", got, into)
	}
	if l, err := os.Readlink(filepath.Join(into, "git-remote-secure")); err != nil || l != "git-secure" {
		t.Fatalf("git-remote-secure is not git-secure: %q %v", l, err)
	}

	// A binary that does not match the checksums is refused.
	files[name] = append(append([]byte{}, bin...), 0)
	r = runCI(ci, ci.sb.Home, append(env, "GIT_SECURE_INSTALL_DIR="+ci.path("bin2")), "install")
	if r.code != 2 || !strings.Contains(r.stderr, "does not match SHA256SUMS") {
		t.Fatalf("a tampered binary must be refused:\n%s", r)
	}
	if _, err := os.Stat(filepath.Join(ci.path("bin2"), "git-secure")); err == nil {
		t.Fatal("the tampered binary was installed")
	}
}

// The CI check judges the tags the server serves: a protected release tag
// pushed past the log (a forge has no hook) fails it, while a recorded
// tag and a tag no rule protects pass. It fetched the server's tags into
// refs/tags/* only, where verify takes a tag the log never recorded for
// the clone's own, and passed (findings/02-ci-unrecorded-protected-tag.sh).
func TestCIActionUnrecordedProtectedTag(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("citag.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-rule", "releases", "--ref", "refs/tags/v*", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "tag", "v1.0")
	alice.git(dir, "push", "-q", "origin", "main", "refs/tags/v1.0")
	main := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/heads/main"))
	env := []string{"GITHUB_EVENT_NAME=push", "GITHUB_SHA=" + main, "GITHUB_STEP_SUMMARY=" + alice.path("summary.md")}
	ci := newUser(t, "ci")
	check := func(name string) result {
		t.Helper()
		d := checkoutLikeActions(ci, url, name, main, "refs/remotes/origin/main")
		if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
			t.Fatalf("fetch step:\n%s", r)
		}
		return runCI(ci, d, env, "verify")
	}
	// A tag no rule protects, made on the server without an entry.
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/tags/nightly", main)
	if r := check("recorded"); r.code != 0 {
		t.Fatalf("a recorded release tag and an unprotected tag must verify:\n%s", r)
	}
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/tags/v9.9", main)
	r := check("unrecorded")
	if r.code != 1 || !strings.Contains(r.stderr, "refs/tags/v9.9: ref does not match the log") || !strings.Contains(r.stderr, "the log has no entry for it") {
		t.Fatalf("a protected tag the server serves without an entry must fail the check:\n%s", r)
	}
}

// The CI check judges the server's replace refs: on a forge without hooks
// mallory pushes refs/replace/<main> (a commit that mirrors of the forge
// then read as main), and the CI check fails naming it. The CI script
// fetched heads, tags and refs/secure/* only, so verify never saw it and
// passed (session 14's finding 02, findings/05-ci-replace-ref-unseen.sh).
func TestCIActionReplaceRef(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("cireplace.git", true)
	alice := newUser(t, "alice")
	benchRepo(t, alice, "work", url, true)
	main := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/heads/main"))
	env := []string{"GITHUB_EVENT_NAME=push", "GITHUB_SHA=" + main, "GITHUB_STEP_SUMMARY=" + alice.path("summary.md")}
	ci := newUser(t, "ci")
	check := func(name string) result {
		t.Helper()
		d := checkoutLikeActions(ci, url, name, main, "refs/remotes/origin/main")
		if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
			t.Fatalf("fetch step:\n%s", r)
		}
		return runCI(ci, d, env, "verify")
	}
	if r := check("clean"); r.code != 0 {
		t.Fatalf("a server without replace refs must verify:\n%s", r)
	}
	tree := strings.TrimSpace(srv.admin.git(path, "rev-parse", main+"^{tree}"))
	evil := strings.TrimSpace(srv.admin.git(path, "commit-tree", tree, "-p", main, "-m", "not main"))
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/replace/"+main, evil)
	r := check("replaced")
	if r.code != 1 || !strings.Contains(r.stderr, "refs/replace/"+main) || !strings.Contains(r.stderr, "git reads "+main+" as "+evil[:12]) || !strings.Contains(r.stderr, "no rule names refs/replace/ explicitly") {
		t.Fatalf("a replace ref the server serves, that no rule names, must fail the check:\n%s", r)
	}
}

// The CI check judges every ref of the server a rule may protect, not only
// branches, tags and replace refs: on a forge without hooks someone moves
// a protected notes ref, creates one and deletes another of a custom
// namespace past the log, and the CI check fails naming each ref and the
// rule. The CI script
// fetched heads, tags, replace refs and refs/secure/* only, so verify
// never saw them and passed (findings/08-ci-other-namespaces-unseen.sh).
// A forge's pull request refs stay out of the fetch, as the helper's.
func TestCIActionProtectedOtherNamespaces(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("cinotes.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-rule", "notes", "--ref", "refs/notes/*", "--allow", "alice")
	alice.secure(dir, "policy", "add-rule", "release-train", "--ref", "refs/custom/**", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "notes", "add", "-m", "reviewed", "HEAD")
	alice.git(dir, "update-ref", "refs/custom/train/next", "HEAD")
	alice.git(dir, "push", "-q", "origin", "main", "refs/notes/commits", "refs/custom/train/next")
	main := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/heads/main"))
	notes := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/notes/commits"))
	env := []string{"GITHUB_EVENT_NAME=push", "GITHUB_SHA=" + main, "GITHUB_STEP_SUMMARY=" + alice.path("summary.md")}
	ci := newUser(t, "ci")
	check := func(name string) result {
		t.Helper()
		d := checkoutLikeActions(ci, url, name, main, "refs/remotes/origin/main")
		if r := runCI(ci, d, nil, "fetch"); r.code != 0 {
			t.Fatalf("fetch step:\n%s", r)
		}
		return runCI(ci, d, env, "verify")
	}
	noHook := []string{"-c", "core.hooksPath=/dev/null", "update-ref"}
	// What nothing judges: a ref no rule protects, and a forge's pull
	// request ref (left out of the fetch).
	srv.admin.git(path, append(noHook, "refs/misc/scratch", main)...)
	srv.admin.git(path, append(noHook, "refs/pull/1/head", main)...)
	if r := check("clean"); r.code != 0 {
		t.Fatalf("recorded notes and custom refs, an unprotected ref and a pull request ref must verify:\n%s", r)
	}
	tree := strings.TrimSpace(srv.admin.git(path, "rev-parse", notes+"^{tree}"))
	evil := strings.TrimSpace(srv.admin.git(path, "commit-tree", tree, "-p", notes, "-m", "notes moved past the log"))
	srv.admin.git(path, append(noHook, "refs/notes/commits", evil)...)
	srv.admin.git(path, append(noHook, "refs/custom/release", main)...)
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", "-d", "refs/custom/train/next")
	r := check("moved")
	for _, want := range []string{
		"refs/notes/commits: ref does not match the log",
		"but the log records", "changed without an entry (protected by rule notes)",
		"refs/custom/release: ref does not match the log",
		"the log has no entry for it (protected by rule release-train)",
		"refs/custom/train/next: ref does not match the log",
		"but origin does not serve it (no remote-tracking ref): deleted without an entry, or not fetched yet (protected by rule release-train)",
	} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Fatalf("protected refs outside heads, tags and replace refs that the server moved past the log must fail the check (want %q):\n%s", want, r)
		}
	}
}

// A forge's namespace that a rule names is fetched and judged: the CI
// script leaves refs/pull/* out only while no rule names it, and verify
// fails closed on a clone whose refspecs leave out a namespace a rule
// names, instead of passing its refs unjudged.
func TestCIActionForgeNamespaceARuleNames(t *testing.T) {
	srv := startServer(t, trFile)
	path, url := srv.newRepo("ciforge.git", true)
	alice := newUser(t, "alice")
	dir := benchRepo(t, alice, "work", url, true)
	alice.secure(dir, "policy", "add-rule", "pull-requests", "--ref", "refs/pull/**", "--allow", "alice")
	alice.secure(dir, "policy", "apply")
	alice.git(dir, "push", "-q", "origin", "main")
	main := strings.TrimSpace(srv.admin.git(path, "rev-parse", "refs/heads/main"))
	srv.admin.git(path, "-c", "core.hooksPath=/dev/null", "update-ref", "refs/pull/7/head", main)
	env := []string{"GITHUB_EVENT_NAME=push", "GITHUB_SHA=" + main, "GITHUB_STEP_SUMMARY=" + alice.path("summary.md")}
	ci := newUser(t, "ci")
	d := checkoutLikeActions(ci, url, "ci", main, "refs/remotes/origin/main")
	if r := runCI(ci, d, nil, "fetch"); r.code != 0 || !strings.Contains(r.stderr, "the policy names refs/pull/: fetching it too") {
		t.Fatalf("fetch step:\n%s", r)
	}
	r := runCI(ci, d, env, "verify")
	if r.code != 1 || !strings.Contains(r.stderr, "refs/pull/7/head: ref does not match the log") || !strings.Contains(r.stderr, "(protected by rule pull-requests)") {
		t.Fatalf("a pull request ref a rule protects, served without an entry, must fail the check:\n%s", r)
	}
	ci.git(d, "config", "--add", "remote.origin.fetch", "^refs/pull/*")
	r = runCI(ci, d, env, "verify")
	if r.code != 1 || !strings.Contains(r.stderr, "refs/pull/*: protected namespace not fetched: a rule of the policy names refs/pull/, but remote.origin.fetch leaves it out") {
		t.Fatalf("a namespace a rule names that the fetch refspecs leave out must fail the check:\n%s", r)
	}
}

// The CI script and the README's CI recipe leave out the forges'
// namespaces by name: the same list as policy.ForgeRefPrefixes, which the
// remote helper's fetch leaves out.
func TestCIForgeNamespacesMatchPolicy(t *testing.T) {
	var names []string
	for _, p := range policy.ForgeRefPrefixes {
		names = append(names, strings.TrimSuffix(strings.TrimPrefix(p, "refs/"), "/"))
	}
	want := "for ns in " + strings.Join(names, " ") + "; do"
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(ciScript(t))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{"README.md": readme, "git-secure-ci.sh": script} {
		if !strings.Contains(string(text), want) {
			t.Errorf("%s does not leave out the forges' namespaces as policy.ForgeRefPrefixes names them (want %q)", name, want)
		}
	}
}
