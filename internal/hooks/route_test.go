package hooks

import (
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/testing/testutil"
)

// With RouteAllKey set to the empty prefix, git sends every push URL to
// git-remote-secure; NoRewrite gives the helper's own git processes the URL
// itself back, "=" in it included. git is the oracle.
func TestNoRewrite(t *testing.T) {
	sb := testutil.NewSandbox(t)
	dir := sb.InitRepo("repo", 1)
	sb.Git(dir, "config", RouteAllKey, "")
	for _, url := range []string{
		"file:///srv/git/project.git",
		"https://example.com/p.git?a=b&c=d",
		"git@example.com:team/p.git",
		"/srv/git/project.git",
		"persistent-https::example.com/p",
	} {
		t.Run(url, func(t *testing.T) {
			sb.Git(dir, "remote", "add", "r", url)
			defer sb.Git(dir, "remote", "remove", "r")
			if got := sb.Git(dir, "remote", "get-url", "--push", "r"); got != "secure::"+url {
				t.Fatalf("with %s = \"\", the push URL is %q, want secure::%s", RouteAllKey, got, url)
			}
			got := sb.Git(dir, append(NoRewrite(url), "remote", "get-url", "--push", "r")...)
			if got != url {
				t.Fatalf("with NoRewrite, the push URL is %q, want %q", got, url)
			}
			if fetch := sb.Git(dir, "remote", "get-url", "r"); strings.HasPrefix(fetch, "secure::") {
				t.Fatalf("the fetch URL is rewritten too: %q", fetch)
			}
		})
	}
}
