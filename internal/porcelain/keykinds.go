package porcelain

import (
	"fmt"
	"strings"

	"github.com/git-secure/git-secure/internal/gitsign"
	"github.com/git-secure/git-secure/internal/gpgsign"
	"github.com/git-secure/git-secure/internal/sign"
	"github.com/git-secure/git-secure/internal/sshkeygen"
)

// loadOpenPGPSigner returns a gpg-backed signer when the signing key is an
// OpenPGP key: --key openpgp:FINGERPRINT, or no --key with git config
// gpg.format=openpgp and user.signingkey a fingerprint (what git commit -S
// uses). gpg.openpgp.program, else gpg.program, names the program, as for
// git. ok is false when the key is not an OpenPGP key.
//
// Security keys come through the SSH path: their key file or .pub file
// (or user.signingkey with gpg.format=ssh) names the key, and ssh-agent
// signs with it, or else ssh-keygen -Y sign (securityKeySigner); either
// asks the device, which waits for a touch.
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

// securityKeySigner signs through ssh-keygen -Y sign (git config
// gpg.ssh.program, as for git) when the signing key is a security key
// file whose key ssh-agent does not hold: ssh-keygen asks the device,
// which waits for a touch. ok is false for any other key.
func (r *Repo) securityKeySigner(spec sign.KeySpec) (sign.Signer, bool, error) {
	path := spec.File
	if path == "" {
		path = spec.SigningKey
	}
	priv, pub, ok := sign.SecurityKeyFile(strings.TrimSpace(path), r.Home)
	if !ok {
		return nil, false, nil
	}
	program, _, err := r.ConfigValue("gpg.ssh.program")
	if err != nil {
		return nil, true, err
	}
	s, err := sshkeygen.New(program, priv, pub, r.Prompt)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return s, true, nil
}

// loadKeylessSigner returns a gitsign-backed signer when the signing key
// is a keyless identity: --key "sigstore-oidc ISSUER SUBJECT", or no --key
// with git config gpg.format=x509 and user.signingkey that identity.
// gpg.x509.program names the program ("gitsign"), as for git. ok is false
// for any other key.
func (r *Repo) loadKeylessSigner(keyFile string) (sign.Signer, bool, error) {
	id := keyFile
	if keyFile == "" {
		format, _, err := r.ConfigValue("gpg.format")
		if err != nil || format != "x509" {
			return nil, false, err
		}
		if id, _, err = r.ConfigValue("user.signingKey"); err != nil {
			return nil, false, err
		}
	}
	if !strings.HasPrefix(id, sign.KeyTypeSigstore+" ") {
		if keyFile == "" {
			return nil, true, usage("gpg.format is x509 but user.signingkey is not a keyless identity: git config user.signingkey \"sigstore-oidc ISSUER SUBJECT\" (the identity gitsign logs in as), or pass --key")
		}
		return nil, false, nil
	}
	program, _, err := r.ConfigValue("gpg.x509.program")
	if err != nil {
		return nil, true, err
	}
	s, err := gitsign.New(program, id)
	if err != nil {
		return nil, true, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return s, true, nil
}
