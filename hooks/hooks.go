// Package hooks holds git-secure's hook scripts. Each is a few lines of
// POSIX sh that hands the work to the git-secure binary ("git-secure hook
// NAME"), where all logic lives; the scripts only avoid starting it when
// there is nothing to do, so that commits and pushes stay fast. The
// installer in internal/hooks fills in the placeholders:
//
//	@BINARY@  the git-secure binary (shell-quoted)
//	@FIND@    sets d (the git directory) and h (the hook git-secure's
//	          replaced, which it chains to)
//	@NAME@    the hook's name
//	@MARKER@  the file, in the git directory, where git-remote-secure
//	          leaves "<pid> <remote>" while it carries a push
package hooks

import (
	"embed"
	"strings"
)

//go:embed pre-push pre-receive reference-transaction server-reference-transaction post-receive forward
var files embed.FS

// Handled lists the hooks git-secure acts on; every other hook gets the
// forward script.
var Handled = []string{"pre-push"}

// Guard is the optional hook (git secure hooks install --guard-refs) that
// refuses changes to refs/secure/* not made by git-secure. It is not
// installed by default: git runs it twice for every ref update, commits
// included, which costs two shells each time.
const Guard = "reference-transaction"

// Template returns the script for a client hook: its own file when
// git-secure handles it (the guard only when asked for), else the
// forwarder.
func Template(name string, guard bool) string {
	if name == Guard && guard {
		return read(name)
	}
	for _, h := range Handled {
		if h == name {
			return read(name)
		}
	}
	return read("forward")
}

// ServerHooks are the hooks of an enforcing server: pre-receive judges the
// state a push would create; reference-transaction makes it land whole;
// post-receive refreshes the freshness statement (when configured).
var ServerHooks = []string{"pre-receive", "reference-transaction", "post-receive"}

// MarkerFormat is the line of the server's reference-transaction script
// that says which push markers it reads (internal/hooks markJudged): a
// marker is written only for a script that reads the log and policy tips
// it binds, so that an older script left installed by an upgrade of the
// binary never accepts a marked transaction unseen.
const MarkerFormat = "# markers: tip lines and one file per ref (format 3)\n"

// ServerTemplate is the server's hook name.
func ServerTemplate(name string) string {
	if name == "reference-transaction" {
		return read("server-reference-transaction")
	}
	return read(name)
}

func read(name string) string {
	data, err := files.ReadFile(name)
	if err != nil {
		panic("hooks: missing embedded script " + name) // a build error
	}
	return string(data)
}

// Render fills a template's placeholders.
func Render(tmpl string, vars map[string]string) string {
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "@"+k+"@", v)
	}
	return strings.NewReplacer(pairs...).Replace(tmpl)
}
