package cli

// Transitional: the commands not yet moved to their packages reach the
// factory through these. Removed when the last command has moved.

import (
	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/trace"
	"github.com/git-secure/git-secure/internal/verify"
	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/ssh"
	"time"
)

var (
	keyFlag  = cmdutil.KeyFlag
	jsonFlag = cmdutil.JSONFlag
)

func usageErr(format string, args ...any) error { return report.Usagef(format, args...) }

func (a *app) open() (*porcelain.Repo, error)        { return a.f.Repo() }
func (a *app) openFromGit() (*porcelain.Repo, error) { return a.f.RepoFromGit() }
func (a *app) tracer(name string) *trace.Tracer      { return a.f.Tracer(name) }
func (a *app) printJSON(v any) error                 { return a.f.PrintJSON(v) }
func (a *app) out(format string, args ...any)        { a.f.Out(format, args...) }
func (a *app) info(format string, args ...any)       { a.f.Info(format, args...) }
func (a *app) stderrTerminal() bool                  { return a.f.StderrTerminal() }
func (a *app) say(prefix, msg string) {
	a.f.Printer().Say(prefix[len("git-secure: "):len(prefix)-2], "%s", msg)
}
func (a *app) exit(err error) int { return exit(a.f, err) }

func shortHash(h gitrepo.Hash) string                        { return cmdutil.ShortHash(h) }
func hashOrEmpty(h gitrepo.Hash) string                      { return cmdutil.HashOrEmpty(h) }
func readPublicKeys(paths []string) ([]ssh.PublicKey, error) { return cmdutil.ReadPublicKeys(paths) }
func readPublicKey(path string) (ssh.PublicKey, error)       { return cmdutil.ReadPublicKey(path) }
func (a *app) stage(desc string, edit porcelain.Edit) error  { return cmdutil.Stage(a.f, desc, edit) }
func (a *app) printStatus(st *porcelain.Staged) error        { return cmdutil.PrintStatus(a.f, st) }
func rootKeyFlag(def string) cli.Flag                        { return cmdutil.RootKeyFlag(def) }
func rootThresholdFlag(def string) cli.Flag                  { return cmdutil.RootThresholdFlag(def) }
func rootPin(c *cli.Context, r *porcelain.Repo) ([]string, int, error) {
	return cmdutil.RootPin(cmdutil.PinOf(c), r)
}
func pinFlags(v []string) []string                 { return cmdutil.PinFlags(v) }
func parseTimeFlag(n, v string) (time.Time, error) { return cmdutil.ParseTimeFlag(n, v) }
func judgedClone(g *gitrepo.Repo, named string) (*verify.CloneState, error) {
	o, err := cmdutil.JudgedOptions(g, named)
	return o.Clone, err
}
