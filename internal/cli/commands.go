package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/theupdateframework/go-tuf/v2/metadata"
	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/hooks"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/verify"
)

func (a *app) initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set this repository up: your key becomes the root and rules key, every branch and tag is recorded",
		Description: `Writes the first policy (refs/secure/policy), with your key as the only root key
and rules key (threshold 1), and starts the log (refs/secure/rsl) with one entry
for the policy and one for every existing branch and tag. History before init is
the accepted starting point. Nothing is protected until you add rules.`,
		Flags: []cli.Flag{keyFlag, jsonFlag, &cli.BoolFlag{Name: "no-hooks", Usage: "do not install the hooks and remote helper (git secure hooks install)"}},
		Action: func(c *cli.Context) error {
			r, err := a.open()
			if err != nil {
				return err
			}
			res, err := r.Init(c.String("key"))
			if err != nil {
				return err
			}
			var in *hooks.Installer
			if !c.Bool("no-hooks") {
				in = a.installHooksAfterInit(r)
			}
			if c.Bool("json") {
				return a.printJSON(res)
			}
			a.out("Initialized git-secure with root and rules key %s.\n", res.Fingerprint)
			a.out("Recorded %d entries: the policy and %d refs.\n", res.Entries, res.Entries-1)
			if in != nil {
				a.reportInstall(in)
			}
			a.out("\nNext:\n")
			a.out("  git secure policy add-person NAME --key NAME.pub      # everyone who will sign\n")
			a.out("  git secure policy add-rule protect-main --ref refs/heads/main --allow NAME [--threshold N]\n")
			a.out("  git secure policy apply                               # sign and put the rules in force\n")
			a.out("  git secure verify                                     # anyone can check, from any clone\n")
			return nil
		},
	}
}

func (a *app) verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "replay the log from its first entry and check every change against the policy of its time",
		ArgsUsage: "[REF...]",
		Description: `Checks each entry's signature, that each policy change was signed by the required
thresholds and only moves forward, that each change of a protected ref or file
was signed or approved by enough distinct persons, and that the repository's
refs are exactly what the log records. With REF arguments only those refs are
checked (policy changes always are).

Which refs are judged: in a bare repository, its own refs. In a clone with a
work tree, what the remote served: the remote-tracking refs, mapped back
through the remote's fetch refspecs (refs/remotes/origin/main is the remote's
refs/heads/main), and the tags the log records (fetched tags land in
refs/tags/, so a recorded tag is judged at its local value). Your own branches
and tags (ahead, behind, new) are listed as local state and never fail; a tag
the log never recorded is yours unless named as a REF argument. Without a
remote, the repository's own refs are judged (a branch ahead of its entry is
unpushed work). --json says which state was judged.

Exit 0 when everything verifies, 1 when a check fails, 2 on usage errors.`,
		Flags: []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "full", Usage: "ignore the saved checkpoint and check every entry again"},
			&cli.StringFlag{Name: "at", Usage: "with one REF: was `COMMIT` ever a verified state of REF? (exit 0 yes, 1 no)"},
			&cli.BoolFlag{Name: "attest", Usage: "with one REF: after success, write a signed SLSA verification summary (in-toto, DSSE) of REF"},
			&cli.StringFlag{Name: "out", Usage: "write the --attest summary to `FILE` (default stdout)"},
			rootKeyFlag("git config secure.rootKeys, else trust on first use"), rootThresholdFlag("git config secure.rootThreshold, else all of them"),
			&cli.StringFlag{Name: "remote", Usage: "in a clone with a work tree, judge what remote `NAME` served (default: the checked-out branch's upstream remote, else origin, else the only remote)"},
			&cli.BoolFlag{Name: "allow-shallow", Usage: "accept a shallow clone: the checks that need history beyond its boundary are skipped, each named in a warning"},
			keyFlag, freshnessFlags[0], freshnessFlags[1], mergeableFlags[0], mergeableFlags[1], mergeableFlags[2]},
		Action: func(c *cli.Context) error {
			if c.Bool("mergeable") || c.IsSet("markdown") || c.IsSet("signer") {
				return a.verifyMergeable(c)
			}
			r, err := a.open()
			if err != nil {
				return err
			}
			var refs []string
			for _, name := range c.Args().Slice() {
				full, err := r.FullRefName(name)
				if err != nil {
					return err
				}
				refs = append(refs, full)
			}
			if (c.IsSet("at") || c.Bool("attest")) && len(refs) != 1 {
				return usageErr("--at and --attest need exactly one REF")
			}
			clone, err := judgedClone(r.Git, c.String("remote"))
			if err != nil {
				return err
			}
			// Without a remote a working repository's refs are the only
			// state there is: judged, but a branch ahead of its entry is
			// work nothing has served yet.
			noRemote := clone == nil && r.Git.WorkTree() != ""
			opts := verify.Options{Refs: refs, Now: a.env.Now(), Clone: clone, LocalAhead: noRemote, IgnoreMissingRefs: noRemote, AllowShallow: c.Bool("allow-shallow")}
			if err := applyFreshnessFlags(c, r.Git, &opts); err != nil {
				return err
			}
			if opts.RootKeys, opts.RootThreshold, err = rootPin(c, r); err != nil {
				return err
			}
			prog := a.newProgress(!c.Bool("json"))
			opts.Progress = prog.update
			if a.env.Getenv("GIT_SECURE_TRACE") != "" {
				opts.Trace = func(phase string, d time.Duration) {
					a.info("git-secure: trace: %-13s %v\n", phase, d.Round(time.Millisecond))
				}
			}
			start := time.Now()
			res, err := verify.WithCheckpoint(r.Git, opts, c.Bool("full"))
			prog.finish()
			var failed *verify.Failed
			if err != nil && !errors.As(err, &failed) {
				return err
			}
			if failed == nil && c.IsSet("at") {
				n, err := a.verifyAt(r, res, refs[0], c.String("at"))
				if err != nil {
					return err
				}
				if c.Bool("json") {
					if err := a.printJSON(map[string]any{"ok": n != 0, "ref": refs[0], "commit": c.String("at"), "entry": n}); err != nil {
						return err
					}
					if n == 0 {
						return cli.Exit("", ExitFailed)
					}
					return nil
				}
				if n == 0 {
					a.info("git-secure: %s was never a verified state of %s\n", c.String("at"), refs[0])
					return cli.Exit("", ExitFailed)
				}
				a.out("%s was a verified state of %s: entry #%d\n", c.String("at"), refs[0], n)
				return nil
			}
			if failed == nil && c.Bool("attest") {
				return a.writeSummary(r, res, refs[0], c.String("key"), c.String("out"))
			}
			if c.Bool("json") {
				out := newVerifyJSON(res, failed)
				out.Seconds = time.Since(start).Seconds()
				if jerr := a.printJSON(out); jerr != nil {
					return jerr
				}
				if failed != nil {
					return cli.Exit("", ExitFailed)
				}
				return nil
			}
			if res != nil {
				for _, w := range res.Warnings {
					a.info("git-secure: warning: %s\n", w)
				}
			}
			if failed != nil {
				return err
			}
			checked := ""
			if res.Checked < res.Entries {
				checked = fmt.Sprintf(" (%d new since the last verification; --full checks all)", res.Checked)
			}
			a.out("verified %d entries%s in %.2fs: policy root v%d, rules v%d (expires %s)\n", res.Entries, checked, time.Since(start).Seconds(), res.RootVersion, res.RulesVersion, res.PolicyExpires.Format("2006-01-02"))
			a.out("judged: %s\n", res.Judged)
			for _, s := range res.Refs {
				mark := " "
				if s.Protected {
					mark = "*"
				}
				line := fmt.Sprintf("%s %-40s %s", mark, s.Ref, s.Target.String()[:12])
				if s.Entry != 0 {
					line += fmt.Sprintf("  entry #%d", s.Entry)
				}
				if s.Note != "" {
					line += "  (" + s.Note + ")"
				}
				a.out("%s\n", line)
			}
			a.out("(* protected by a rule)\n")
			a.printLocal(res)
			return nil
		},
	}
}

type problemJSON struct {
	Entry   uint64 `json:"entry,omitempty"`
	EntryID string `json:"entryId,omitempty"`
	Ref     string `json:"ref,omitempty"`
	Rule    string `json:"rule,omitempty"`
	Kind    string `json:"kind"`
	Detail  string `json:"detail"`
	Hint    string `json:"hint,omitempty"`
}

type verifyJSON struct {
	OK bool `json:"ok"`
	// Judged says which refs were compared with the log (verify.Result.Judged).
	Judged   string         `json:"judged,omitempty"`
	Result   *verify.Result `json:"result,omitempty"`
	Problems []problemJSON  `json:"problems,omitempty"`
	Seconds  float64        `json:"seconds"`
}

func hashOrEmpty(h gitrepo.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

func (a *app) rslCommand() *cli.Command {
	return &cli.Command{
		Name:  "rsl",
		Usage: "record ref changes in the Reference State Log and show it",
		Subcommands: []*cli.Command{
			{
				Name:      "record",
				Usage:     "append a signed entry for REF's current value (or its deletion)",
				ArgsUsage: "REF",
				Description: `Records "REF now points at X", signed with your key. Refused (exit 1, nothing
written) when no rule lets you move REF; when you may but the rule needs more
persons, the entry is written and the command says who must still approve.`,
				Flags: []cli.Flag{keyFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("rsl record takes exactly one REF, e.g. git secure rsl record main")
					}
					r, err := a.open()
					if err != nil {
						return err
					}
					res, err := r.Record(c.Args().First(), c.String("key"))
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return a.printJSON(res)
					}
					if res.NoOp {
						a.out("%s is already recorded at %s (entry #%d)\n", res.Ref, res.New.String()[:12], res.Entry)
						return nil
					}
					a.out("recorded entry #%d: %s %s -> %s\n", res.Entry, res.Ref, shortHash(res.Old), shortHash(res.New))
					for _, p := range res.Pending {
						a.info("git-secure: note: %s\n", p)
					}
					return nil
				},
			},
			{
				Name:      "skip",
				Usage:     "mark the newest entries of refs as mistaken (a revoked push): they stop counting",
				ArgsUsage: "ENTRY...",
				Description: `Appends a signed annotation. Each skipped ref goes back to its latest entry
before the skipped ones; you must be allowed to move it back: verification checks
it like any update, path rules on the files the move changes back included, and so
does this command before it signs. Then move the ref itself back, as the command says.`,
				Flags: []cli.Flag{keyFlag, jsonFlag, &cli.StringFlag{Name: "reason", Usage: "why (recorded in the log)", Required: true}},
				Action: func(c *cli.Context) error {
					var nums []uint64
					for _, a := range c.Args().Slice() {
						var n uint64
						if _, err := fmt.Sscanf(strings.TrimPrefix(a, "#"), "%d", &n); err != nil || n == 0 {
							return usageErr("%q is not an entry number", a)
						}
						nums = append(nums, n)
					}
					r, err := a.open()
					if err != nil {
						return err
					}
					res, err := r.Skip(nums, c.String("reason"), c.String("key"))
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return a.printJSON(res)
					}
					a.out("recorded annotation #%d\n", res.Entry)
					for _, p := range res.Pending {
						a.info("git-secure: note: %s\n", p)
					}
					for ref, back := range res.Refs {
						if back == "deleted" {
							a.out("  %s is now recorded as absent: git update-ref -d %s\n", ref, ref)
						} else {
							a.out("  %s is now recorded at %s: move it back with git update-ref %s %s\n", ref, back[:12], ref, back)
						}
					}
					return nil
				},
			},
			{
				Name:  "log",
				Usage: "show the log, newest first",
				Flags: []cli.Flag{jsonFlag, &cli.IntFlag{Name: "max-count", Aliases: []string{"n"}, Usage: "show at most `N` entries"}},
				Action: func(c *cli.Context) error {
					r, err := a.open()
					if err != nil {
						return err
					}
					return a.rslLog(r, c.Bool("json"), c.Int("max-count"))
				},
			},
			a.rslRepairCommand(),
		},
	}
}

func shortHash(h gitrepo.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}

func readPublicKeys(paths []string) ([]ssh.PublicKey, error) {
	var keys []ssh.PublicKey
	for _, p := range paths {
		pub, err := readPublicKey(p)
		if err != nil {
			return nil, err
		}
		keys = append(keys, pub)
	}
	return keys, nil
}

// readPublicKey reads a public key file, or the public half of a private
// key file (FILE.pub next to it, or derived from an unencrypted key).
func readPublicKey(path string) (ssh.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("read key %s: %v", path, err)
	}
	if len(data) > 64<<10 {
		return nil, usageErr("key file %s is too large", path)
	}
	// A key of a refused type or size (DSA, short RSA) is reported as such,
	// from whichever of the three forms names it.
	var refused *sign.UnsupportedKeyError
	pub, _, err := sign.ParsePublicKey(data)
	if err == nil {
		return pub, nil
	}
	if errors.As(err, &refused) {
		return nil, usageErr("key %s: %v", path, refused)
	}
	if pubData, err := os.ReadFile(path + ".pub"); err == nil {
		pub, _, err := sign.ParsePublicKey(pubData)
		if err == nil {
			return pub, nil
		}
		if errors.As(err, &refused) {
			return nil, usageErr("key %s.pub: %v", path, refused)
		}
	}
	pub, err = sign.PublicKeyOfPrivate(data)
	if err == nil {
		return pub, nil
	}
	if errors.As(err, &refused) {
		return nil, usageErr("key %s: %v", path, refused)
	}
	return nil, usageErr("%s is not an SSH public key (expected a line like \"ssh-ed25519 AAAA... name\")", path)
}

func (a *app) stage(desc string, edit porcelain.Edit) error {
	r, err := a.open()
	if err != nil {
		return err
	}
	st, err := r.Stage(desc, edit)
	if err != nil {
		return err
	}
	a.out("staged: %s\n", desc)
	return a.printStatus(st)
}

func (a *app) printStatus(st *porcelain.Staged) error {
	statuses, err := st.Status()
	if err != nil {
		return err
	}
	a.out("signatures needed before git secure policy apply can put it in force:\n")
	for _, s := range statuses {
		a.out("  %s\n", s.String())
	}
	return nil
}

func (a *app) policyCommand() *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "persons, rules, and staged policy changes (sign, apply)",
		Description: `Changes are staged on refs/secure/policy-staging; "policy sign" adds your
signature, "policy apply" signs if needed and puts the change in force once the
rules keys' threshold (and, for root changes, the root thresholds) are met.`,
		Subcommands: []*cli.Command{
			{
				Name:      "add-person",
				Usage:     "add a person with one or more keys (all count as one person)",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{&cli.StringSliceFlag{Name: "key", Usage: "public key `FILE` (repeatable)", Required: true}, forgeAccountFlags[0], forgeAccountFlags[1]},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("add-person takes exactly one NAME")
					}
					keys, err := readPublicKeys(c.StringSlice("key"))
					if err != nil {
						return err
					}
					name := c.Args().First()
					if err := a.stage("add person "+name, func(p, base *policy.Policy, now time.Time) error {
						return p.AddPerson(base, name, keys, now)
					}); err != nil {
						return err
					}
					return a.setForgeAccounts(c, name)
				},
			},
			{
				Name:      "remove-person",
				Usage:     "remove a person (refused while a rule allows them)",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("remove-person takes exactly one NAME")
					}
					name := c.Args().First()
					return a.stage("remove person "+name, func(p, base *policy.Policy, now time.Time) error {
						return p.RemovePerson(base, name, now)
					})
				},
			},
			{
				Name:      "add-rule",
				Usage:     "protect refs and/or files: who may change them, and how many must agree",
				ArgsUsage: "NAME",
				Description: `--ref alone protects refs (who may move them). --path alone protects files on
the refs that some rule's --ref names (the branches and tags that ship: main,
releases), not on review branches, which stay free to push; a merge into a
protected ref is still checked for the files it brings. --path with --ref protects
those files on those refs; --ref 'refs/**' (or '**') makes a path rule judge every
ref. A forge's own refs (refs/pull/, refs/merge-requests/, refs/changes/,
refs/keep-around/) are covered only by a --ref that names them, e.g.
'refs/pull/**'. Patterns: * (not /), ** (any),
? (one character). A protected tag (refs/tags/...) can be created once and never
moved or deleted. Examples:
   git secure policy add-rule main --ref refs/heads/main --allow alice --allow bob --threshold 2
   git secure policy add-rule main --ref refs/heads/main --require team:developers=2 --require team:security=1
   git secure policy add-rule crypto --path 'src/crypto/**' --allow team:security
   git secure policy add-rule tested --ref refs/heads/main --allow team:developers --require-tests-by ci`,
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "ref", Usage: "ref `PATTERN`, e.g. refs/heads/main or refs/tags/v* (repeatable)"},
					&cli.StringSliceFlag{Name: "path", Usage: "file `PATTERN`, e.g. src/crypto/** (repeatable)"},
					&cli.StringSliceFlag{Name: "allow", Usage: "`PERSON` or team:NAME who may sign (repeatable)"},
					&cli.IntFlag{Name: "threshold", Usage: "distinct allowed persons `N` required (default 1, or the sum of --require)"},
					&cli.StringSliceFlag{Name: "require", Usage: "`GROUP=N`: N distinct persons of GROUP (a person or team:NAME) must sign or approve, every --require at once (repeatable)"},
					&cli.StringSliceFlag{Name: "require-tests-by", Usage: "`GROUP` (person or team:NAME) that must have attested a passing test run on the new tree (git secure attest run)"},
					&cli.BoolFlag{Name: "tree-approvals", Usage: "let approvals bound to the new tree count (git secure attest approve --tree): they survive a rebase or amend that keeps the tree"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("add-rule takes exactly one NAME")
					}
					rule := policy.Rule{Name: c.Args().First(), Refs: everyRefSpelled(c.StringSlice("ref")), Paths: c.StringSlice("path"), Allow: c.StringSlice("allow"), Threshold: c.Int("threshold"), TestsBy: c.StringSlice("require-tests-by"), TreeApprovals: c.Bool("tree-approvals")}
					for _, q := range c.StringSlice("require") {
						req, err := policy.ParseRequirement(q)
						if err != nil {
							return usageErr("%v", err)
						}
						rule.Require = append(rule.Require, req)
					}
					if c.IsSet("threshold") && rule.Threshold < 1 {
						return usageErr("--threshold must be at least 1")
					}
					return a.stage("add rule "+rule.Name, func(p, base *policy.Policy, now time.Time) error {
						if err := p.AddRule(base, rule, now); err != nil {
							return err
						}
						if len(rule.Refs) == 0 && !p.HasRefPatterns() {
							a.info("git-secure: warning: rule %s protects its files on the refs that rules name with --ref, and no rule names one yet\n", rule.Name)
							a.info("git-secure: hint: add a rule for the branches that ship (git secure policy add-rule main --ref refs/heads/main ...), or give this one --ref\n")
						}
						return nil
					})
				},
			},
			{
				Name:      "add-team",
				Usage:     "add a team: a named set of persons that rules can allow or require (team:NAME)",
				ArgsUsage: "NAME",
				Flags:     []cli.Flag{&cli.StringSliceFlag{Name: "member", Usage: "`PERSON` (repeatable)", Required: true}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("add-team takes exactly one NAME")
					}
					name, members := c.Args().First(), c.StringSlice("member")
					return a.stage("add team "+name, func(p, base *policy.Policy, now time.Time) error {
						return p.AddTeam(base, name, members, now)
					})
				},
			},
			{
				Name:      "remove-team",
				Usage:     "remove a team no rule names",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("remove-team takes exactly one NAME")
					}
					name := c.Args().First()
					return a.stage("remove team "+name, func(p, base *policy.Policy, now time.Time) error {
						return p.RemoveTeam(base, name, now)
					})
				},
			},
			{
				Name:      "add-global-rule",
				Usage:     "a rule on top of all others: --no-force-push, or --min-persons N for every protected update",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringSliceFlag{Name: "ref", Usage: "ref `PATTERN` it applies to (repeatable; default: every ref)"},
					&cli.BoolFlag{Name: "no-force-push", Usage: "matching refs may only fast-forward (no rewrite, no deletion)"},
					&cli.IntFlag{Name: "min-persons", Usage: "every update of a protected ref needs `N` distinct persons"},
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("add-global-rule takes exactly one NAME")
					}
					g := policy.GlobalRule{Name: c.Args().First(), Refs: c.StringSlice("ref")}
					switch {
					case c.Bool("no-force-push") && !c.IsSet("min-persons"):
						g.Type = policy.GlobalNoForcePush
					case c.IsSet("min-persons") && !c.Bool("no-force-push"):
						g.Type, g.N = policy.GlobalMinPersons, c.Int("min-persons")
					default:
						return usageErr("give exactly one of --no-force-push or --min-persons N")
					}
					return a.stage("add global rule "+g.Name, func(p, base *policy.Policy, now time.Time) error {
						return p.AddGlobalRule(base, g, now)
					})
				},
			},
			{
				Name:      "remove-global-rule",
				Usage:     "remove a global rule",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("remove-global-rule takes exactly one NAME")
					}
					name := c.Args().First()
					return a.stage("remove global rule "+name, func(p, base *policy.Policy, now time.Time) error {
						return p.RemoveGlobalRule(base, name, now)
					})
				},
			},
			{
				Name:      "remove-rule",
				Usage:     "remove a rule",
				ArgsUsage: "NAME",
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("remove-rule takes exactly one NAME")
					}
					name := c.Args().First()
					return a.stage("remove rule "+name, func(p, base *policy.Policy, now time.Time) error {
						return p.RemoveRule(base, name, now)
					})
				},
			},
			{
				Name:  "list",
				Usage: "show the policy in force (and what is staged)",
				Flags: []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "staged", Usage: "show the staged change instead"}},
				Action: func(c *cli.Context) error {
					r, err := a.open()
					if err != nil {
						return err
					}
					st, err := r.LoadStaged()
					if err != nil {
						return err
					}
					p := st.Base
					if c.Bool("staged") {
						p = st.Policy
					}
					return a.listPolicy(p, st, c.Bool("json"))
				},
			},
			{
				Name:  "sign",
				Usage: "add your signature to the staged change",
				Flags: []cli.Flag{keyFlag},
				Action: func(c *cli.Context) error {
					r, err := a.open()
					if err != nil {
						return err
					}
					st, err := r.SignStaged(c.String("key"))
					if err != nil {
						return err
					}
					a.out("signed the staged change\n")
					return a.printStatus(st)
				},
			},
			{
				Name:  "apply",
				Usage: "sign if needed and put the staged change in force when its thresholds are met",
				Flags: []cli.Flag{keyFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					r, err := a.open()
					if err != nil {
						return err
					}
					res, st, err := r.Apply(c.String("key"))
					if err != nil {
						if errors.Is(err, porcelain.ErrThresholdPending) && st != nil {
							a.printStatus(st)
							a.info("git-secure: hint: each missing signer runs git secure policy sign (after fetching refs/secure/policy-staging), then anyone runs git secure policy apply\n")
						}
						return err
					}
					if c.Bool("json") {
						return a.printJSON(res)
					}
					a.out("policy applied: root v%d, rules v%d, recorded as entry #%d\n", res.RootVersion, res.RulesVersion, res.Entry)
					return nil
				},
			},
			{
				Name:  "renew",
				Usage: "stage a new version of the rules (and with --root the root) that expires a year from now",
				Flags: []cli.Flag{&cli.BoolFlag{Name: "root", Usage: "renew the root too (needs the root keys' threshold)"}},
				Action: func(c *cli.Context) error {
					root := c.Bool("root")
					return a.stage("renew", func(p, base *policy.Policy, now time.Time) error {
						return p.Renew(base, root, now)
					})
				},
			},
			{
				Name:   "check",
				Usage:  "replay the whole history under the staged policy: what would it have refused?",
				Flags:  []cli.Flag{jsonFlag},
				Action: func(c *cli.Context) error { return a.policyCheck(c) },
			},
			{
				Name:  "discard",
				Usage: "drop the staged change",
				Action: func(c *cli.Context) error {
					r, err := a.open()
					if err != nil {
						return err
					}
					return r.Discard()
				},
			},
		},
	}
}

type policyJSON struct {
	RootVersion   int64        `json:"rootVersion"`
	RulesVersion  int64        `json:"rulesVersion"`
	RootExpires   time.Time    `json:"rootExpires"`
	RulesExpires  time.Time    `json:"rulesExpires"`
	RootKeys      []string     `json:"rootKeys"`
	RootThreshold int          `json:"rootThreshold"`
	RulesKeys     []string     `json:"rulesKeys"`
	RulesThresh   int          `json:"rulesThreshold"`
	Persons       []personJSON `json:"persons"`
	Teams         []teamJSON   `json:"teams"`
	Rules         []ruleJSON   `json:"rules"`
	GlobalRules   []globalJSON `json:"globalRules"`
	Revoked       []revokeJSON `json:"revokedKeys"`
	Staged        bool         `json:"staged"`
	Freshness     *freshJSON   `json:"freshness,omitempty"`
}

type teamJSON struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

type globalJSON struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Refs       []string `json:"refs,omitempty"`
	MinPersons int      `json:"minPersons,omitempty"`
}

type revokeJSON struct {
	Key       string `json:"key"`
	FromEntry uint64 `json:"fromEntry"`
}

type personJSON struct {
	Name string   `json:"name"`
	Keys []string `json:"keys"`
}

type ruleJSON struct {
	Name      string   `json:"name"`
	Refs      []string `json:"refs,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Allow     []string `json:"allow"`
	Threshold int      `json:"threshold"`
	Require   []string `json:"require,omitempty"`
	TestsBy   []string `json:"requireTestsBy,omitempty"`
	// TreeApprovals: approvals bound to the new tree count.
	TreeApprovals bool `json:"treeApprovals,omitempty"`
	// EveryRef: a path rule without ref patterns signed before path rules
	// were scoped; it judges every ref.
	EveryRef bool `json:"everyRef,omitempty"`
}

func (a *app) listPolicy(p *policy.Policy, st *porcelain.Staged, asJSON bool) error {
	j := policyJSON{RootVersion: p.Root.Signed.Version, RulesVersion: p.Targets.Signed.Version,
		RootExpires: p.Root.Signed.Expires, RulesExpires: p.Targets.Signed.Expires, Staged: st.Changed(),
		Persons: []personJSON{}, Rules: []ruleJSON{}, Teams: []teamJSON{}, GlobalRules: []globalJSON{}, Revoked: []revokeJSON{}}
	for _, t := range p.Teams() {
		j.Teams = append(j.Teams, teamJSON{Name: t.Name, Members: t.Members})
	}
	for _, g := range p.GlobalRules() {
		j.GlobalRules = append(j.GlobalRules, globalJSON{Name: g.Name, Type: g.Type, Refs: g.Refs, MinPersons: g.N})
	}
	for _, r := range p.Revocations() {
		j.Revoked = append(j.Revoked, revokeJSON{Key: r.Fingerprint, FromEntry: r.FromEntry})
	}
	rk, rt := p.RoleKeys(metadata.ROOT)
	for _, k := range rk {
		j.RootKeys = append(j.RootKeys, k.Fingerprint)
	}
	j.RootThreshold = rt
	tk, tt := p.RoleKeys(metadata.TARGETS)
	for _, k := range tk {
		j.RulesKeys = append(j.RulesKeys, k.Fingerprint)
	}
	j.RulesThresh = tt
	j.Freshness = newFreshJSON(p)
	for _, person := range p.Persons() {
		pj := personJSON{Name: person.Name}
		for _, k := range person.Keys {
			pj.Keys = append(pj.Keys, k.Fingerprint)
		}
		j.Persons = append(j.Persons, pj)
	}
	for _, r := range p.Rules() {
		rj := ruleJSON{Name: r.Name, Refs: r.Refs, Paths: r.Paths, Allow: r.Allow, Threshold: r.Threshold, TestsBy: r.TestsBy, TreeApprovals: r.TreeApprovals, EveryRef: r.EveryRef}
		for _, q := range r.Require {
			rj.Require = append(rj.Require, q.String())
		}
		j.Rules = append(j.Rules, rj)
	}
	if asJSON {
		return a.printJSON(j)
	}
	a.out("root v%d (expires %s): threshold %d of %s\n", j.RootVersion, j.RootExpires.Format("2006-01-02"), j.RootThreshold, strings.Join(j.RootKeys, ", "))
	a.out("rules v%d (expires %s): signed by %d of %s\n", j.RulesVersion, j.RulesExpires.Format("2006-01-02"), j.RulesThresh, strings.Join(j.RulesKeys, ", "))
	a.printFreshness(j.Freshness)
	a.out("\npersons:\n")
	if len(j.Persons) == 0 {
		a.out("  (none: add with git secure policy add-person NAME --key FILE)\n")
	}
	for _, pj := range j.Persons {
		a.out("  %-16s %s\n", pj.Name, strings.Join(pj.Keys, ", "))
	}
	a.out("\nrules:\n")
	if len(j.Rules) == 0 {
		a.out("  (none: nothing is protected yet)\n")
	}
	for _, r := range j.Rules {
		a.out("  %-16s %s\n", r.Name, ruleSummary(r))
	}
	if len(j.Teams) > 0 {
		a.out("\nteams:\n")
		for _, t := range j.Teams {
			a.out("  %-16s %s\n", t.Name, strings.Join(t.Members, ", "))
		}
	}
	if len(j.GlobalRules) > 0 {
		a.out("\nglobal rules:\n")
		for _, g := range j.GlobalRules {
			scope := "every ref"
			if len(g.Refs) > 0 {
				scope = strings.Join(g.Refs, ", ")
			}
			what := "no force push or deletion"
			if g.Type == policy.GlobalMinPersons {
				what = fmt.Sprintf("at least %d persons per protected update", g.MinPersons)
			}
			a.out("  %-16s %s: %s\n", g.Name, scope, what)
		}
	}
	a.printForgePolicy(p)
	if len(j.Revoked) > 0 {
		a.out("\nrevoked keys:\n")
		for _, r := range j.Revoked {
			a.out("  %s from entry #%d\n", r.Key, r.FromEntry)
		}
	}
	if j.Staged {
		a.out("\na change is staged: see git secure policy list --staged; put it in force with git secure policy apply\n")
	}
	return nil
}

func (a *app) trustCommand() *cli.Command {
	roleCmd := func(name, usage, role string, add bool) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, ArgsUsage: "FILE",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return usageErr("%s takes exactly one public key FILE", name)
				}
				pub, err := readPublicKey(c.Args().First())
				if err != nil {
					return err
				}
				fp := sign.Fingerprint(pub)
				return a.stage(fmt.Sprintf("%s %s", name, fp), func(p, base *policy.Policy, now time.Time) error {
					if add {
						return p.AddRoleKey(base, role, pub, now)
					}
					return p.RemoveRoleKey(base, role, fp, now)
				})
			},
		}
	}
	thresholdCmd := func(name, usage, role string) *cli.Command {
		return &cli.Command{
			Name: name, Usage: usage, ArgsUsage: "N",
			Action: func(c *cli.Context) error {
				var n int
				if c.NArg() != 1 {
					return usageErr("%s takes exactly one number N", name)
				}
				if _, err := fmt.Sscanf(c.Args().First(), "%d", &n); err != nil || fmt.Sprint(n) != c.Args().First() {
					return usageErr("%s: %q is not a number", name, c.Args().First())
				}
				return a.stage(fmt.Sprintf("%s %d", name, n), func(p, base *policy.Policy, now time.Time) error {
					return p.SetRoleThreshold(base, role, n, now)
				})
			},
		}
	}
	return &cli.Command{
		Name:  "trust",
		Usage: "root of trust: root keys, rules keys and their thresholds (staged like policy changes)",
		Description: `A root change needs the signatures of the old root keys' threshold and of the
new root keys' threshold (git secure policy sign / apply).`,
		Subcommands: []*cli.Command{
			roleCmd("add-root-key", "add a root key", metadata.ROOT, true),
			roleCmd("remove-root-key", "remove a root key", metadata.ROOT, false),
			thresholdCmd("set-threshold", "set how many root keys must sign a root change", metadata.ROOT),
			roleCmd("add-rules-key", "add a key trusted to sign rules changes", metadata.TARGETS, true),
			roleCmd("remove-rules-key", "remove a rules key", metadata.TARGETS, false),
			thresholdCmd("set-rules-threshold", "set how many rules keys must sign a rules change", metadata.TARGETS),
			a.forgeTrustCommands()[0], a.forgeTrustCommands()[1],
			{
				Name:      "revoke-key",
				Usage:     "declare a key compromised from RSL entry N on: what it signed from there fails verification",
				ArgsUsage: "FILE|FINGERPRINT",
				Description: `Entries and approvals the key made before entry N still verify; those from N on
do not, even where the policy of their time allowed the key. Also remove the key
from its person or role (remove-person, remove-root-key) so it signs nothing new.`,
				Flags: []cli.Flag{&cli.Uint64Flag{Name: "from-entry", Usage: "first RSL entry `N` the key may no longer sign", Required: true}},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("revoke-key takes one public key FILE or SHA256: fingerprint")
					}
					fp := c.Args().First()
					if !strings.HasPrefix(fp, "SHA256:") {
						pub, err := readPublicKey(fp)
						if err != nil {
							return err
						}
						fp = sign.Fingerprint(pub)
					}
					from := c.Uint64("from-entry")
					return a.stage(fmt.Sprintf("revoke key %s from entry #%d", fp, from), func(p, base *policy.Policy, now time.Time) error {
						return p.RevokeKey(base, fp, from, now)
					})
				},
			},
		},
	}
}

func (a *app) attestCommand() *cli.Command {
	return &cli.Command{
		Name:  "attest",
		Usage: "signed statements that count toward thresholds (approvals, passing test runs)",
		Subcommands: []*cli.Command{
			{
				Name:      "run",
				Usage:     "run the tests on HEAD's committed tree and, if they pass, attest it",
				ArgsUsage: "-- CMD [ARGS...]",
				Description: `Refuses a work tree with changes, runs CMD in it, and when CMD exits 0 (and left
the tree unchanged) records a signed in-toto statement: this tree, this command,
exit 0, how long, which tools. Rules with --require-tests-by accept an update only
when its tree has such a statement from their group ("tests passed on this exact
tree", from a developer's machine or CI). Example:
   git secure attest run -- make test`,
				Flags: []cli.Flag{keyFlag, jsonFlag},
				Action: func(c *cli.Context) error {
					argv := c.Args().Slice()
					if len(argv) > 0 && argv[0] == "--" {
						argv = argv[1:]
					}
					r, err := a.open()
					if err != nil {
						return err
					}
					res, err := r.AttestRun(argv, c.String("key"), Version, a.env.Stderr, a.env.Stderr)
					if err != nil {
						return err
					}
					if c.Bool("json") {
						return a.printJSON(res)
					}
					a.out("tests passed in %.1fs; %s attested tree %s (commit %s)\n", float64(res.DurationMs)/1000, res.Person, res.Tree.String()[:12], res.Commit.String()[:12])
					return nil
				},
			},
			{
				Name:      "approve",
				Usage:     "approve exactly one update of REF: from OLD (default: its recorded value) to NEW",
				ArgsUsage: "REF",
				Description: `Stores an in-toto statement in a DSSE envelope signed with your key on
refs/secure/attestations. It counts, with the entry's signer, toward the
threshold of the rules that protect REF, for that exact update only.

It fetches from REF's remote first (git fetch), so that it approves the
update from the value the remote's log records now, and warns when the
update it approves can no longer happen. To approve a commit someone
published for review, fetch it first (git fetch).`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "to", Usage: "the new value: a commit or a ref name", Required: true},
					&cli.StringFlag{Name: "from", Usage: "the old value (default: REF's latest recorded value)"},
					&cli.BoolFlag{Name: "tree", Usage: "bind the approval to NEW's tree instead of the commit (counts where the rule has --tree-approvals)"},
					&cli.BoolFlag{Name: "no-fetch", Usage: "approve against the local log without fetching from the remote first"},
					keyFlag, jsonFlag,
				},
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return usageErr("approve takes exactly one REF")
					}
					r, err := a.open()
					if err != nil {
						return err
					}
					ref, err := r.FullRefName(c.Args().First())
					if err != nil {
						return err
					}
					remote, err := approveRemote(r, ref)
					if err != nil {
						return err
					}
					if remote != "" && !c.Bool("no-fetch") {
						if err := a.refreshForApprove(r, remote); err != nil {
							return err
						}
					}
					approve := r.Approve
					if c.Bool("tree") {
						approve = r.ApproveTree
					}
					res, err := approve(ref, c.String("to"), c.String("from"), c.String("key"))
					if err != nil {
						return err
					}
					a.warnUnreachable(r, remote, res)
					if c.Bool("json") {
						return a.printJSON(res)
					}
					a.out("%s approves %s %s -> %s\n", res.Person, res.Ref, shortHash(res.From), shortHash(res.To))
					a.shareApproval(r, remote)
					return nil
				},
			},
		},
	}
}

// everyRefSpelled reads --ref '**' as refs/**, the pattern for every ref.
func everyRefSpelled(refs []string) []string {
	out := slices.Clone(refs)
	for i, r := range out {
		if r == "**" {
			out[i] = "refs/**"
		}
	}
	return out
}

// ruleSummary describes what a rule protects and what it needs, in one line.
func ruleSummary(r ruleJSON) string {
	var what []string
	for _, x := range r.Refs {
		what = append(what, "ref "+x)
	}
	for _, x := range r.Paths {
		what = append(what, "path "+x)
	}
	switch {
	case len(r.Refs) > 0 || len(r.Paths) == 0:
	case r.EveryRef:
		what = append(what, "on every ref (signed before path rules were scoped; re-add it to scope it)")
	default:
		what = append(what, "on the refs the ref rules name")
	}
	line := fmt.Sprintf("%s: %d of %s", strings.Join(what, ", "), r.Threshold, strings.Join(r.Allow, ", "))
	if len(r.Require) > 0 {
		line += "; and " + strings.Join(r.Require, " and ")
	}
	if len(r.TestsBy) > 0 {
		line += "; tests passed, attested by " + strings.Join(r.TestsBy, " or ")
	}
	if r.TreeApprovals {
		line += "; tree-bound approvals count"
	}
	return line
}

// newVerifyJSON is the --json document of a verification.
func newVerifyJSON(res *verify.Result, failed *verify.Failed) verifyJSON {
	out := verifyJSON{OK: failed == nil, Result: res}
	if res != nil {
		out.Judged = res.Judged
	}
	if failed != nil {
		for _, p := range failed.Problems {
			out.Problems = append(out.Problems, problemJSON{Entry: p.Entry, EntryID: hashOrEmpty(p.EntryID), Ref: p.Ref, Rule: p.Rule, Kind: p.Kind.Error(), Detail: p.Detail, Hint: p.Hint})
		}
	}
	return out
}

// judgedClone returns what a verification of this repository judges: nil
// (its own refs, strictly) for a bare repository or a clone without
// remotes, else the state of the remote named, or of the default remote
// (verify.ChooseRemote).
func judgedClone(g *gitrepo.Repo, named string) (*verify.CloneState, error) {
	if g.WorkTree() == "" {
		if named != "" {
			return nil, usageErr("--remote: a bare repository is judged by its own refs, which are what it serves")
		}
		return nil, nil
	}
	remote, err := verify.ChooseRemote(g, named)
	if errors.Is(err, verify.ErrNoRemote) {
		return nil, nil
	}
	if err != nil {
		return nil, usageErr("%v", err)
	}
	st, err := verify.LoadCloneState(g, remote)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return st, nil
}

// printLocal lists a working clone's own refs that differ from the log:
// information, never a failure.
func (a *app) printLocal(res *verify.Result) {
	if len(res.Local) == 0 {
		return
	}
	a.out("local state (yours, not judged):\n")
	for _, l := range res.Local {
		line := fmt.Sprintf("  %-40s %s  %s", l.Ref, l.Target.String()[:12], l.State)
		switch {
		case l.State == "stale":
			line += " (no fetch refspec maps it)"
		case l.Recorded != nil && l.Recorded.IsZero():
			line += fmt.Sprintf(" (the log records it deleted, entry #%d)", l.Entry)
		case l.Recorded != nil:
			line += fmt.Sprintf(" (the log records %s, entry #%d)", l.Recorded.String()[:12], l.Entry)
		default:
			line += " (the log has no entry for it)"
		}
		a.out("%s\n", line)
	}
}
