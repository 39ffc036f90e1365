package porcelain

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gpgsign"
	"github.com/git-secure/git-secure/internal/sign"
)

// loadOpenPGPSigner returns a gpg-backed signer when the signing key is an
// OpenPGP key: --key openpgp:FINGERPRINT, or no --key with git config
// gpg.format=openpgp and user.signingkey a fingerprint (what git commit -S
// uses). gpg.openpgp.program, else gpg.program, names the program, as for
// git. ok is false when the key is not an OpenPGP key.
//
// Security keys need nothing here: their .pub file (or user.signingkey
// with gpg.format=ssh) names the key and ssh-agent signs with it, asking
// the device, which waits for a touch.
func (r *Repo) loadOpenPGPSigner(keyFile string) (sign.Signer, bool, error) {
	fpr, named := strings.CutPrefix(keyFile, gpgsign.Prefix)
	if keyFile == "" {
		format, _, err := r.ConfigValue("gpg.format")
		if err != nil {
			return nil, false, err
		}
		if format != "openpgp" {
			return nil, false, nil
		}
		v, _, err := r.ConfigValue("user.signingKey")
		if err != nil {
			return nil, false, err
		}
		if v == "" {
			return nil, true, usage("gpg.format is openpgp but user.signingkey is not set: git config user.signingkey FINGERPRINT (gpg --list-keys --with-colons shows it), or pass --key openpgp:FINGERPRINT")
		}
		fpr, named = v, true
	}
	if !named {
		return nil, false, nil
	}
	program, _, err := r.ConfigValue("gpg.openpgp.program")
	if err != nil {
		return nil, true, err
	}
	if program == "" {
		if program, _, err = r.ConfigValue("gpg.program"); err != nil {
			return nil, true, err
		}
	}
	s, err := gpgsign.New(program, fpr)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return s, true, nil
}
