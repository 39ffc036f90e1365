// Command fakegitsign plays gitsign for tests: run as git's
// gpg.x509.program (or by internal/gitsign) with --status-fd=2 -bsau ID,
// it signs stdin with the test Sigstore saved in $KEYLESSTEST_DIR as the
// identity $KEYLESSTEST_ISSUER / $KEYLESSTEST_SUBJECT (who "logged in"),
// in offline Rekor mode only (GITSIGN_REKOR_MODE=offline, as gitsign
// would otherwise not embed the log entry), and writes the armored
// signature to stdout. Verification (--verify) is not played: git-secure
// verifies by itself.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/git-secure/git-secure/internal/keyless"
	"github.com/git-secure/git-secure/internal/testing/keylesstest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakegitsign:", err)
		os.Exit(1)
	}
}

func run() error {
	args := os.Args[1:]
	if !slices.Contains(args, "-bsau") {
		return fmt.Errorf("only signing (-bsau ID) is played, not %q", args)
	}
	if os.Getenv("GITSIGN_REKOR_MODE") != "offline" {
		return fmt.Errorf("GITSIGN_REKOR_MODE is not offline: the Rekor entry would not be embedded")
	}
	content, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
	if err != nil {
		return err
	}
	c := keylesstest.Cert{Identity: keyless.Identity{Issuer: os.Getenv("KEYLESSTEST_ISSUER"), Subject: os.Getenv("KEYLESSTEST_SUBJECT")}}
	der, err := keylesstest.SignFile(os.Getenv("KEYLESSTEST_DIR"), c, content)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "\n[GNUPG:] SIG_CREATED D 1 8 00 0 fakegitsign")
	_, err = os.Stdout.Write(keyless.Armor(der))
	return err
}
