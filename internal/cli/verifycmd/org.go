package verifycmd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/git-secure/git-secure/internal/cli/cmdutil"
	"github.com/git-secure/git-secure/internal/cli/factory"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/verify"
)

// maxOrgList bounds the repositories of one verify --org list.
const maxOrgList = 10000

// OrgRepoJSON is one repository of verify --org --json.
type OrgRepoJSON struct {
	Repository string                `json:"repository"`
	OK         bool                  `json:"ok"`
	Entries    int                   `json:"entries,omitempty"`
	Org        string                `json:"org,omitempty"`
	OrgVersion uint64                `json:"orgVersion,omitempty"`
	Pin        string                `json:"pin,omitempty"`
	Problems   []cmdutil.ProblemJSON `json:"problems,omitempty"`
	Error      string                `json:"error,omitempty"`
}

// orgLine is one line of a list: a URL or path, and optionally the root
// key fingerprints to pin.
type orgLine struct {
	url      string
	rootKeys []string
}

// readOrgList reads LIST: one repository per line, "URL [SHA256:...]...",
// blank lines and # comments ignored.
func readOrgList(path string) ([]orgLine, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, report.Usagef("--org: %v", err)
	}
	var out []orgLine
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		url := f[0]
		if !strings.Contains(url, "://") && !strings.Contains(url, "@") {
			if url, err = filepath.Abs(url); err != nil {
				return nil, report.Usagef("--org: %s line %d: %v", path, n, err)
			}
			url = "file://" + url
		}
		if err := policy.ValidOrgURL(url); err != nil {
			return nil, report.Usagef("--org: %s line %d: %v", path, n, err)
		}
		if err := verify.CheckPin(f[1:], 0); err != nil {
			return nil, report.Usagef("--org: %s line %d: %v", path, n, err)
		}
		if len(out) == maxOrgList {
			return nil, report.Usagef("--org: %s lists more than %d repositories", path, maxOrgList)
		}
		out = append(out, orgLine{url: url, rootKeys: f[1:]})
	}
	if err := sc.Err(); err != nil {
		return nil, report.Usagef("--org: %s: %v", path, err)
	}
	if len(out) == 0 {
		return nil, report.Usagef("--org: %s lists no repository (one URL or path per line, optionally followed by root key fingerprints)", path)
	}
	return out, nil
}

// runOrgVerify verifies every repository of the list, each in a fresh
// mirror, and prints one table (or --json). Exit 0 when all verify, 1
// when one does not.
func runOrgVerify(_ context.Context, opts *Options) error {
	f := opts.F
	lines, err := readOrgList(opts.Org)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "git-secure-verify-org-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var rows []OrgRepoJSON
	ok := true
	for i, l := range lines {
		row := verifyOrgRepo(f, filepath.Join(tmp, fmt.Sprintf("%d.git", i)), l)
		ok = ok && row.OK
		rows = append(rows, row)
	}
	if opts.JSON {
		if err := f.PrintJSON(map[string]any{"ok": ok, "repositories": rows}); err != nil {
			return err
		}
	} else {
		printOrgTable(f, rows)
	}
	if !ok {
		return report.Exit(report.ExitFailed)
	}
	return nil
}

// verifyOrgRepo mirrors one repository into dir and verifies it as a
// server's state (its refs, strictly), with its organisation policy.
func verifyOrgRepo(f *factory.Factory, dir string, l orgLine) OrgRepoJSON {
	row := OrgRepoJSON{Repository: l.url, Pin: "first use"}
	if len(l.rootKeys) > 0 {
		row.Pin = "pinned"
	}
	g, err := gitrepo.InitBare(dir, os.Environ())
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer g.Close()
	args := append(gitrepo.NoRewrite(l.url), "-c", "protocol.ext.allow=never", "-c", "protocol.fd.allow=never",
		"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--no-auto-maintenance", "--", l.url, "+refs/*:refs/*")
	if _, err := g.Run(context.Background(), nil, args...); err != nil {
		row.Error = fmt.Sprintf("fetch: %v", err)
		return row
	}
	r := &porcelain.Repo{Git: g, Now: f.Now, Home: f.Getenv("HOME")}
	res, err := verify.Verify(g, verify.Options{Now: f.Now(), RootKeys: l.rootKeys, Org: r.OrgCache()})
	if res != nil {
		row.Entries, row.Org, row.OrgVersion = res.Entries, res.Org, res.OrgVersion
	}
	failed, isFailed := cmdutil.Failed(err)
	switch {
	case !isFailed:
		row.Error = err.Error()
	case failed != nil:
		row.Problems = cmdutil.NewVerifyJSON(res, failed).Problems
	default:
		row.OK = true
	}
	return row
}

func printOrgTable(f *factory.Factory, rows []OrgRepoJSON) {
	var b bytes.Buffer
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "REPOSITORY\tRESULT\tENTRIES\tORG VERSION\tROOT\tFIRST PROBLEM")
	for _, r := range rows {
		result, first := "ok", ""
		switch {
		case r.Error != "":
			result, first = "error", r.Error
		case !r.OK:
			result = fmt.Sprintf("FAILED (%d)", len(r.Problems))
			if len(r.Problems) > 0 {
				p := r.Problems[0]
				first = p.Kind + ": " + p.Detail
			}
		}
		ver := "-"
		if r.Org != "" {
			ver = fmt.Sprintf("%d", r.OrgVersion)
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\t%s\n", r.Repository, result, r.Entries, ver, r.Pin, oneLine(first))
	}
	w.Flush()
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			f.Out("%s\n", strings.TrimSuffix(line, "\n"))
		}
	}
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
