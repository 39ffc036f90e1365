package benchrepo_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/testing/benchrepo"
	"github.com/git-secure/git-secure/internal/verify"
)

func git(t testing.TB, dir string, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = benchrepo.Env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return strings.TrimSpace(out.String())
}

// TestBuild checks that generated repositories are sound for git (fsck,
// git's own SSH signature check) and verify for git-secure, with both
// object writers.
func TestBuild(t *testing.T) {
	for _, writer := range []string{benchrepo.WriterPack, benchrepo.WriterLoose} {
		t.Run(writer, func(t *testing.T) {
			info, err := benchrepo.Build(t.TempDir(), benchrepo.Options{Entries: 45, Spare: 3, Writer: writer})
			if err != nil {
				t.Fatal(err)
			}
			if info.Releases != 4 || len(info.Spare) != 3 {
				t.Fatalf("releases %d, spare %d", info.Releases, len(info.Spare))
			}
			gd := info.GitDir()
			git(t, gd, nil, "fsck", "--strict", "--no-dangling")
			allowed := filepath.Join(t.TempDir(), "allowed")
			pub, err := os.ReadFile(info.KeyFile(benchrepo.Alice) + ".pub")
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(pub))
			if err := os.WriteFile(allowed, []byte("alice@example.com "+f[0]+" "+f[1]+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, gd, nil, "-c", "gpg.format=ssh", "-c", "gpg.ssh.allowedSignersFile="+allowed, "verify-commit", rsl.Ref)

			repo, err := gitrepo.OpenWithEnv(gd, benchrepo.Env())
			if err != nil {
				t.Fatal(err)
			}
			defer repo.Close()
			res, err := verify.Verify(repo, verify.Options{Now: info.Now()})
			if err != nil {
				t.Fatal(err)
			}
			if res.Entries != 45 || res.Tip != info.RSL || len(res.Refs) != 3 {
				t.Fatalf("unexpected result %+v", res)
			}
			// Without bob's approvals the release entries fail.
			git(t, gd, nil, "update-ref", "-d", "refs/secure/attestations")
			_, err = verify.Verify(repo, verify.Options{Now: info.Now()})
			var failed *verify.Failed
			if !errors.As(err, &failed) || len(failed.Problems) != 4 {
				t.Fatalf("want a problem with each of the 4 release entries, got %v", err)
			}
			for _, p := range failed.Problems {
				if p.Entry%10 != 0 || p.Ref != benchrepo.ReleaseRef {
					t.Fatalf("unexpected problem %v", p)
				}
			}
		})
	}
}

// signedEntries returns the raw signed entry commits of an n-entry log (in
// order) and a writer-independent source of them.
func signedEntries(b *testing.B, n int) [][]byte {
	b.Helper()
	alice := benchrepo.Signer(benchrepo.Alice)
	var raws [][]byte
	w := captureWriter{out: &raws}
	tip := gitrepo.ZeroHash
	var err error
	for e := 1; e <= n; e++ {
		entry := &rsl.Entry{Number: uint64(e), Type: rsl.TypeRef, Ref: benchrepo.MainRef, New: benchrepo.ObjectID("blob", fmt.Appendf(nil, "%d", e))}
		if e > 1 {
			entry.Old = benchrepo.ObjectID("blob", fmt.Appendf(nil, "%d", e-1))
		}
		who := gitrepo.Ident{Name: "Alice", Email: "alice@example.com", When: time.Unix(int64(1700000000+e), 0).UTC()}
		tip, err = rsl.Write(w, entry, tip, who, func(p []byte) ([]byte, error) { return sign.SignSSHSig(alice, p, sign.NamespaceGit) })
		if err != nil {
			b.Fatal(err)
		}
	}
	return raws
}

type captureWriter struct{ out *[][]byte }

func (c captureWriter) WriteObject(typ string, data []byte) (gitrepo.Hash, error) {
	*c.out = append(*c.out, data)
	return benchrepo.ObjectID(typ, data), nil
}

// BenchmarkWriteEntries compares ways of storing 1 000 signed entry
// commits: in-process pack, in-process loose objects, and one long-lived
// "git hash-object -w --stdin-paths" process (which needs every object in
// a file first). Signing is measured separately ("sign").
func BenchmarkWriteEntries(b *testing.B) {
	const n = 1000
	b.Run("sign", func(b *testing.B) {
		for b.Loop() {
			signedEntries(b, n)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
	})
	raws := signedEntries(b, n)
	fresh := func(b *testing.B) string {
		b.StopTimer()
		defer b.StartTimer()
		dir := filepath.Join(b.TempDir(), "r.git")
		git(b, b.TempDir(), nil, "init", "-q", "--bare", dir)
		return dir
	}
	for _, kind := range []string{benchrepo.WriterPack, benchrepo.WriterLoose} {
		b.Run(kind, func(b *testing.B) {
			for b.Loop() {
				w, err := benchrepo.NewObjectWriter(kind, fresh(b))
				if err != nil {
					b.Fatal(err)
				}
				for _, raw := range raws {
					if _, err := w.WriteObject("commit", raw); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := w.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
		})
	}
	b.Run("hash-object-stdin-paths", func(b *testing.B) {
		for b.Loop() {
			dir := fresh(b)
			tmp := b.TempDir()
			var paths bytes.Buffer
			for i, raw := range raws {
				p := filepath.Join(tmp, fmt.Sprint(i))
				if err := os.WriteFile(p, raw, 0o644); err != nil {
					b.Fatal(err)
				}
				paths.WriteString(p + "\n")
			}
			out := git(b, dir, paths.Bytes(), "hash-object", "-t", "commit", "-w", "--no-filters", "--stdin-paths")
			if strings.Count(out, "\n") != n-1 {
				b.Fatal("hash-object wrote too few objects")
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/object")
	})
}

// BenchmarkSourceChain compares making a linear history of 1 000 commits
// (blob, tree and commit each) with one git fast-import process and with
// the in-process pack writer.
func BenchmarkSourceChain(b *testing.B) {
	const n = 1000
	fresh := func(b *testing.B) string {
		b.StopTimer()
		defer b.StartTimer()
		dir := filepath.Join(b.TempDir(), "r.git")
		git(b, b.TempDir(), nil, "init", "-q", "--bare", dir)
		return dir
	}
	b.Run("fast-import", func(b *testing.B) {
		for b.Loop() {
			dir := fresh(b)
			var in bytes.Buffer
			for k := 1; k <= n; k++ {
				msg := fmt.Sprintf("commit %d\n", k)
				content := fmt.Sprintf("content %d\n", k)
				fmt.Fprintf(&in, "commit refs/heads/main\nmark :%d\ncommitter Dev <dev@example.com> %d +0000\ndata %d\n%s", k, 1700000000+k, len(msg), msg)
				if k > 1 {
					fmt.Fprintf(&in, "from :%d\n", k-1)
				}
				fmt.Fprintf(&in, "M 100644 inline file.txt\ndata %d\n%s\n", len(content), content)
			}
			git(b, dir, in.Bytes(), "fast-import", "--quiet")
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/commit")
	})
	b.Run("pack", func(b *testing.B) {
		for b.Loop() {
			w, err := benchrepo.NewObjectWriter(benchrepo.WriterPack, fresh(b))
			if err != nil {
				b.Fatal(err)
			}
			parent := gitrepo.ZeroHash
			who := gitrepo.Ident{Name: "Dev", Email: "dev@example.com"}
			for k := 1; k <= n; k++ {
				blob, _ := w.WriteObject("blob", fmt.Appendf(nil, "content %d\n", k))
				tree, err := w.WriteTree([]gitrepo.TreeEntry{{Mode: gitrepo.ModeFile, Name: "file.txt", Hash: blob}})
				if err != nil {
					b.Fatal(err)
				}
				var parents []gitrepo.Hash
				if k > 1 {
					parents = []gitrepo.Hash{parent}
				}
				parent, _ = w.WriteObject("commit", gitrepo.EncodeCommit(tree, parents, who, who, fmt.Sprintf("commit %d\n", k)))
			}
			if _, _, err := w.Finish(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/commit")
	})
}

// BenchmarkBuild is the whole generator for 1 000 entries (and 1 000 spare
// commits).
func BenchmarkBuild(b *testing.B) {
	for b.Loop() {
		if _, err := benchrepo.Build(b.TempDir(), benchrepo.Options{Entries: 1000}); err != nil {
			b.Fatal(err)
		}
	}
}
