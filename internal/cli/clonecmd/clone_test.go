package clonecmd

import "testing"

// TestCloneDir: git secure clone names the directory as git clone would.
func TestCloneDir(t *testing.T) {
	for url, want := range map[string]string{
		"https://example.org/group/project.git":  "project",
		"https://example.org/group/project.git/": "project",
		"ssh://server/srv/git/project/.git":      "project",
		"server:project.git":                     "project",
		"/srv/git/project":                       "project",
		"file:///srv/git/p.git":                  "p",
		"https://example.org/":                   "example.org",
		"/":                                      "",
		".git":                                   "",
	} {
		if got := cloneDir(url); got != want {
			t.Errorf("cloneDir(%q) = %q, want %q", url, got, want)
		}
	}
}
