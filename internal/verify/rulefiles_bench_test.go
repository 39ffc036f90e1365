package verify_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/benchrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

// ruleFilesPolicy returns base with files rule files: four in five
// delegated by targets.json (paths src/teamN/**, or refs
// refs/heads/teamN/*), the rest one level below the first ones, each with
// two rules (a path rule on main and release, and one on its own refs or
// paths), every fifth top-level delegation terminating, all signed by
// alice. With persons > 0 it holds that many persons in all (the bench
// policy's and more, each with an ed25519 key of its own, the first
// thousand in a team that a rule of targets.json allows on
// refs/heads/staff/*): at policy.MaxPersons, an organisation at the limit.
func ruleFilesPolicy(b *testing.B, base *policy.Policy, files, persons int) *policy.Policy {
	b.Helper()
	p, err := base.Clone()
	if err != nil {
		b.Fatal(err)
	}
	ts, err := sign.TUFSigner(benchrepo.Signer(benchrepo.Alice))
	if err != nil {
		b.Fatal(err)
	}
	now := base.Targets.Signed.Expires.AddDate(-1, 0, 0)
	top := files * 4 / 5
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < files; i++ {
		name := fmt.Sprintf("team%d", i)
		d := policy.Delegation{Name: name, Signers: []string{benchrepo.Alice}, Threshold: 1}
		parent := ""
		if i >= top {
			parent = fmt.Sprintf("team%d", i-top)
		}
		j := i
		if parent != "" {
			j = i - top
		}
		if j%2 == 0 {
			d.Paths = []string{fmt.Sprintf("src/team%d/**", j)}
		} else {
			d.Refs = []string{fmt.Sprintf("refs/heads/team%d/*", j)}
		}
		d.Terminating = parent == "" && i%5 == 0
		must(p.Delegate(base, parent, d, now))
		refs := []string{benchrepo.MainRef, benchrepo.ReleaseRef}
		paths := []string{fmt.Sprintf("src/team%d/**", j)}
		if len(d.Refs) > 0 {
			refs = d.Refs
			paths = []string{"**"}
		}
		must(p.AddRuleIn(base, name, policy.Rule{Name: "code", Refs: refs, Paths: paths, Allow: []string{benchrepo.Alice}}, now))
		if len(d.Refs) > 0 {
			must(p.AddRuleIn(base, name, policy.Rule{Name: "branches", Refs: d.Refs, Allow: []string{benchrepo.Alice}}, now))
		} else {
			must(p.AddRuleIn(base, name, policy.Rule{Name: "keys", Refs: refs, Paths: []string{fmt.Sprintf("src/team%d/keys/*", j)}, Allow: []string{benchrepo.Alice, benchrepo.Bob}, Threshold: 1}, now))
		}
	}
	addPersons(b, p, base, persons-len(base.Persons()), now)
	must(p.SignTargets(ts))
	var names []string
	for _, f := range p.RuleFiles() {
		names = append(names, f.Name)
	}
	must(p.SignRuleFiles(names, ts))
	for _, f := range p.RuleFiles() {
		if f.Untrusted != "" {
			b.Fatalf("rule file %s: %s", f.Name, f.Untrusted)
		}
	}
	return p
}

// BenchmarkVerifyRuleFiles is BenchmarkVerify's whole-log verification
// with the policy in force at every entry replaced (Options.
// PolicyOverride) by: the bench policy (rulefiles=0); it plus one path rule
// on main and release (rulefiles=0+pathrule: the diffs any path rule
// needs); and it with 100 rule files whose path rules cover main and
// release (rulefiles=100): the cost of walking the delegations for each
// entry on top of those diffs. load-100 is decoding that policy and
// checking the signatures of its 100 files (paid once per policy entry).
func BenchmarkVerifyRuleFiles(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			info, repo := openBench(b, n)
			base, err := policy.Load(repo, info.Policy)
			if err != nil {
				b.Fatal(err)
			}
			// pathrule: no rule file, one top-level path rule on main and
			// release: what the diffs the path rules need cost anyway.
			withPath, err := base.Clone()
			if err != nil {
				b.Fatal(err)
			}
			if err := withPath.AddRule(base, policy.Rule{Name: "src", Refs: []string{benchrepo.MainRef, benchrepo.ReleaseRef}, Paths: []string{"src/**"}, Allow: []string{benchrepo.Alice}}, base.Targets.Signed.Expires.AddDate(-1, 0, 0)); err != nil {
				b.Fatal(err)
			}
			p100 := ruleFilesPolicy(b, base, 100, 0)
			pBig := ruleFilesPolicy(b, base, 100, policy.MaxPersons)
			for _, v := range []struct {
				name string
				pol  *policy.Policy
			}{{"rulefiles=0", base}, {"rulefiles=0+pathrule", withPath}, {"rulefiles=100", p100}, {"rulefiles=100+persons=10000", pBig}} {
				pol := v.pol
				b.Run(v.name, func(b *testing.B) {
					opts := verify.Options{Now: info.Now(), PolicyOverride: pol}
					run := func() {
						res, err := verify.Verify(repo, opts)
						if err != nil {
							b.Fatal(err)
						}
						if res.Entries != n {
							b.Fatalf("verified %d entries, want %d", res.Entries, n)
						}
					}
					run()
					cpu0 := cpuTime()
					b.ReportAllocs()
					for b.Loop() {
						run()
					}
					cpu := cpuTime() - cpu0
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
					// CPU time: the wall time of a loaded machine says
					// little (fast paths leave no git process to miss).
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*n), "cpu-ns/entry")
				})
			}
			for _, l := range []struct {
				name string
				pol  *policy.Policy
			}{{"load-100", p100}, {"load-100+persons=10000", pBig}} {
				root, targets, err := l.pol.Encode()
				if err != nil {
					b.Fatal(err)
				}
				files, err := l.pol.EncodeRuleFiles()
				if err != nil {
					b.Fatal(err)
				}
				b.Run(l.name, func(b *testing.B) {
					cpu0 := cpuTime()
					b.ReportAllocs()
					for b.Loop() {
						if _, err := policy.ParseFiles(root, targets, files); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// addPersons adds n persons person0..person(n-1) with generated keys, the
// first thousand (at most) in team staff, allowed by rule staff.
func addPersons(b *testing.B, p, base *policy.Policy, n int, now time.Time) {
	b.Helper()
	if n <= 0 {
		return
	}
	add := make([]policy.NewPerson, n)
	var staff []string
	for i := range n {
		pub, _, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			b.Fatal(err)
		}
		k, err := ssh.NewPublicKey(pub)
		if err != nil {
			b.Fatal(err)
		}
		add[i] = policy.NewPerson{Name: fmt.Sprintf("person%d", i), Keys: []ssh.PublicKey{k}}
		if i < 1000 {
			staff = append(staff, add[i].Name)
		}
	}
	if err := p.AddPersons(base, add, now); err != nil {
		b.Fatal(err)
	}
	if err := p.AddTeam(base, "staff", staff, now); err != nil {
		b.Fatal(err)
	}
	if err := p.AddRule(base, policy.Rule{Name: "staff", Refs: []string{"refs/heads/staff/*"}, Allow: []string{"team:staff"}, Threshold: 2}, now); err != nil {
		b.Fatal(err)
	}
}
