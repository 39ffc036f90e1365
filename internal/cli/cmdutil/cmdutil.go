// Package cmdutil holds what several commands of the command line share:
// the common flags (--key, --json, the root pin), reading public key files,
// staging a policy change, the verify --json document and the state a
// verification judges. Each command's own code lives in its package under
// internal/cli.
package cmdutil

import (
	"errors"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/crypto/ssh"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/report"
	"github.com/git-secure/git-secure/internal/sign"
)

// KeyFlag is --key, the signing key of a command that signs.
var KeyFlag = &cli.StringFlag{
	Name:  "key",
	Usage: "signing key `FILE`: a private key, or a public key whose private half is in ssh-agent (default: git config user.signingkey when gpg.format=ssh)",
}

// JSONFlag is --json, one JSON document on stdout instead of text.
var JSONFlag = &cli.BoolFlag{Name: "json", Usage: "write one JSON document to stdout"}

// ShortHash is the first 12 digits of h, "(none)" for the zero hash.
func ShortHash(h gitrepo.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}

// OrNone joins names with commas, "nobody" for none.
func OrNone(names []string) string {
	if len(names) == 0 {
		return "nobody"
	}
	return strings.Join(names, ", ")
}

// OrWord is s, or w when s is empty.
func OrWord(s, w string) string {
	if s == "" {
		return w
	}
	return s
}

// HashOrEmpty is h in full, "" for the zero hash.
func HashOrEmpty(h gitrepo.Hash) string {
	if h.IsZero() {
		return ""
	}
	return h.String()
}

// ReadPublicKeys reads each file with ReadPublicKey.
func ReadPublicKeys(paths []string) ([]ssh.PublicKey, error) {
	var keys []ssh.PublicKey
	for _, p := range paths {
		pub, err := ReadPublicKey(p)
		if err != nil {
			return nil, err
		}
		keys = append(keys, pub)
	}
	return keys, nil
}

// ReadPublicKey reads a public key file, or the public half of a private
// key file (FILE.pub next to it, or derived from an unencrypted key).
// Every error is a usage error naming the file.
func ReadPublicKey(path string) (ssh.PublicKey, error) {
	if strings.HasPrefix(path, sign.KeyTypeSigstore+" ") {
		// A keyless identity is given as its text, not in a file.
		pub, _, err := sign.ParsePublicKey([]byte(path))
		if err != nil {
			return nil, report.Usagef("key %q: %v", path, err)
		}
		return pub, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, report.Usagef("read key %s: %v", path, err)
	}
	if len(data) > 64<<10 {
		return nil, report.Usagef("key file %s is too large", path)
	}
	// A key of a refused type or size (DSA, short RSA) is reported as such,
	// from whichever of the three forms names it.
	var refused *sign.UnsupportedKeyError
	pub, _, err := sign.ParsePublicKey(data)
	if err == nil {
		return pub, nil
	}
	if errors.As(err, &refused) {
		return nil, report.Usagef("key %s: %v", path, refused)
	}
	if sign.IsArmoredOpenPGPKey(data) {
		return nil, report.Usagef("key %s: %v", path, err)
	}
	if pubData, err := os.ReadFile(path + ".pub"); err == nil {
		pub, _, err := sign.ParsePublicKey(pubData)
		if err == nil {
			return pub, nil
		}
		if errors.As(err, &refused) {
			return nil, report.Usagef("key %s.pub: %v", path, refused)
		}
	}
	pub, err = sign.PublicKeyOfPrivate(data)
	if err == nil {
		return pub, nil
	}
	if errors.As(err, &refused) {
		return nil, report.Usagef("key %s: %v", path, refused)
	}
	return nil, report.Usagef("%s is not an SSH public key (expected a line like \"ssh-ed25519 AAAA... name\", a security key's \"sk-ssh-ed25519@openssh.com AAAA... name\", an OpenPGP key from gpg --export --armor FINGERPRINT, or a keyless identity given as \"sigstore-oidc ISSUER SUBJECT\")", path)
}
