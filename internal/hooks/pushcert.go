package hooks

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/policy"
	"github.com/git-secure/git-secure/internal/pushcert"
	"github.com/git-secure/git-secure/internal/rsl"
	"github.com/git-secure/git-secure/internal/sign"
)

// Server configuration that makes git ask for push certificates: a
// secret to make nonces with, and how old (in seconds) a nonce may be
// when it comes back in the second request of a stateless (HTTP) push.
const (
	keyCertNonceSeed = "receive.certNonceSeed"
	keyCertNonceSlop = "receive.certNonceSlop"
	defaultNonceSlop = "60"
	// keyAllowedSigners is where git looks for the keys it checks SSH
	// signatures with, push certificates included (GIT_PUSH_CERT_STATUS,
	// which git-secure does not use: the policy decides). Unset, git's
	// receive-pack prints "gpg.ssh.allowedSignersFile needs to be
	// configured" to every signed pusher.
	keyAllowedSigners = "gpg.ssh.allowedSignersFile"
)

// EnsureCertNonceSeed makes the bare repository gitDir ask pushers for
// push certificates (git push --signed): it sets receive.certNonceSeed to
// a fresh random secret, receive.certNonceSlop, and
// gpg.ssh.allowedSignersFile (to the empty /dev/null), each when unset. Without a
// seed git refuses git push --signed ("the receiving end does not support
// --signed push").
func EnsureCertNonceSeed(gitDir string) error {
	g, err := gitrepo.Open(gitDir)
	if err != nil {
		return err
	}
	defer g.Close()
	if _, ok, err := g.Config(keyCertNonceSeed); err != nil {
		return err
	} else if !ok {
		var b [32]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("hooks: make a nonce seed: %w", err)
		}
		if err := g.SetConfig(keyCertNonceSeed, hex.EncodeToString(b[:])); err != nil {
			return err
		}
	}
	for _, kv := range [][2]string{{keyCertNonceSlop, defaultNonceSlop}, {keyAllowedSigners, os.DevNull}} {
		if _, ok, err := g.Config(kv[0]); err != nil {
			return err
		} else if !ok {
			if err := g.SetConfig(kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// certStore is the store commit a signed push adds; the store's ref moves
// to it once the push is accepted.
type certStore struct {
	main    *gitrepo.Repo // the repository, outside the push's quarantine
	old     gitrepo.Hash
	new     gitrepo.Hash
	raw     []byte
	entries []gitrepo.Hash
}

// nonceStatus explains git's GIT_PUSH_CERT_NONCE_STATUS values other than
// OK.
var nonceStatus = map[string]string{
	"UNSOLICITED": "the certificate carries a nonce this server did not ask for",
	"MISSING":     "the certificate carries no nonce although this server asked for one",
	"BAD":         "the certificate's nonce was not issued by this server for this push (a replayed or forged certificate)",
	"SLOP":        "the certificate's nonce is older than receive.certNonceSlop allows",
}

// prepareCert judges the push certificate git received (GIT_PUSH_CERT,
// GIT_PUSH_CERT_NONCE_STATUS) of a push that adds log entries (of any
// other push it is ignored: nothing stores it): the push is refused unless
// the nonce is the one this server issued, the certificate parses, names
// the pushee and nonce, states exactly the push's updates, and is signed
// by a key of a person of the policy the push leaves in force. When the
// push adds log entries, it writes the store commit that records the
// certificate for each (in the repository's own object store: objects
// written inside the push's quarantine would be lost with it) and puts it
// in st.proposed, so that verification judges the entries with it. git's
// own GIT_PUSH_CERT_STATUS is not used: git checks SSH signatures against
// gpg.ssh.allowedSignersFile and OpenPGP ones against the server's gpg
// keyring, both of which the policy replaces (OpenPGP certificates are
// verified in-process, pushcert.Cert.Verify).
func (c *Context) prepareCert(lines []RefLine, st *pushState) (*certStore, error) {
	id := c.Getenv("GIT_PUSH_CERT")
	if id == "" {
		return nil, nil
	}
	refuse := func(format string, args ...any) (*certStore, error) {
		c.say("rejected: the push certificate (git push --signed): "+format, args...)
		return nil, ErrRejected
	}
	newLog := st.proposed[rsl.Ref]
	if newLog.IsZero() || newLog == st.oldLog {
		// No entry to store it with: nothing depends on it (a signed push
		// of a review branch by someone the policy does not list).
		return nil, nil
	}
	if s := c.Getenv("GIT_PUSH_CERT_NONCE_STATUS"); s != "OK" {
		why, ok := nonceStatus[s]
		if !ok {
			why = "git did not check its nonce"
		}
		c.say("rejected: the push certificate (git push --signed): nonce status %q: %s", s, why)
		c.say("hint: push again with git push --signed: git signs a certificate with the nonce the server sends for that push")
		return nil, ErrRejected
	}
	h, err := gitrepo.ParseHash(id)
	if err != nil {
		return refuse("GIT_PUSH_CERT %q is not an object name", id)
	}
	typ, raw, err := c.Repo.Git.ReadObject(h, pushcert.MaxSize)
	if err != nil || typ != "blob" {
		return refuse("cannot read it (%s, %v)", typ, err)
	}
	cert, err := pushcert.Parse(raw)
	if err == nil {
		err = cert.CheckSession()
	}
	if err != nil {
		return refuse("%v", err)
	}
	if why := sameUpdates(cert, lines); why != "" {
		return refuse("%s", why)
	}
	pol, err := c.Repo.PolicyAt(st.proposed[policy.Ref])
	if err != nil {
		return nil, fmt.Errorf("read the policy to check the push certificate: %w", err)
	}
	if _, err := cert.VerifyWith(pol.LookupPersonKey, pol.OpenPGPSubkeyOwner); err != nil {
		fp := cert.SignerFingerprintWith(pol.OpenPGPSubkeyOwner)
		if errors.Is(err, sign.ErrUnknownKey) {
			c.say("rejected: the push certificate (git push --signed) is signed by %s, which is no key of a person of the policy", fp)
			c.say("hint: sign with your key that the policy lists (SSH: git config gpg.format ssh, user.signingkey KEY.pub; OpenPGP: gpg.format openpgp, user.signingkey FINGERPRINT; git secure policy list shows the persons' keys), or push without --signed where no rule requires signed pushes")
			return nil, ErrRejected
		}
		return refuse("signature by %s: %v", fp, err)
	}
	max, err := c.configInt("secure.maxPushEntries", defaultMaxPushEntries)
	if err != nil {
		return nil, err
	}
	entries, err := c.Repo.Git.NewCommits(newLog, st.oldLog, max+1)
	if err != nil {
		return nil, err
	}
	if len(entries) > max {
		return refuse("the push adds more than %d log entries (secure.maxPushEntries)", max)
	}
	main, err := c.mainRepo()
	if err != nil {
		return nil, err
	}
	cs := &certStore{main: main, old: st.proposed[pushcert.Ref], raw: raw, entries: entries}
	if cs.new, err = pushcert.Append(main, cs.old, raw, entries, time.Now()); err != nil {
		main.Close()
		return nil, err
	}
	st.proposed[pushcert.Ref] = cs.new
	return cs, nil
}

// sameUpdates is "" when the certificate states exactly the push's ref
// updates (git takes a signed push's commands from its certificate, so
// anything else is a server that does not), else what differs.
func sameUpdates(cert *pushcert.Cert, lines []RefLine) string {
	for _, l := range lines {
		u, ok := cert.Update(l.Ref)
		if !ok || u.Old != l.Old || u.New != l.New {
			return fmt.Sprintf("it does not state the push's update of %s %s..%s (a certificate of another push)", l.Ref, short(l.Old), short(l.New))
		}
	}
	if len(cert.Updates) != len(lines) {
		return fmt.Sprintf("it states %d ref updates, the push makes %d", len(cert.Updates), len(lines))
	}
	return ""
}

// mainRepo opens the repository with the push's quarantine left out:
// git refuses ref updates inside it, and objects written there are
// deleted with it when the push fails.
func (c *Context) mainRepo() (*gitrepo.Repo, error) {
	var env []string
	for _, kv := range c.Repo.Git.Env() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_QUARANTINE_PATH", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES":
			continue
		}
		env = append(env, kv)
	}
	return gitrepo.OpenWithEnv(c.Repo.Git.GitDir(), env)
}

// storeCert moves the store to the commit prepareCert wrote, once the
// push is accepted and before git moves any of its refs: a push whose
// certificate cannot be stored is refused (nothing lost). A concurrent
// push that stored its own first makes it add the certificate again on
// top. If git then fails to move the push's refs, the stored certificate
// is for entries the log never gets (verification never looks it up).
func (c *Context) storeCert(cs *certStore) error {
	if cs == nil {
		return nil
	}
	defer cs.main.Close()
	var err error
	for try := 0; try < 5; try++ {
		err = cs.main.UpdateRefs([]gitrepo.RefUpdate{{Name: pushcert.Ref, Old: cs.old, New: cs.new}}, "git-secure: store push certificate")
		if err == nil {
			c.say("stored the push certificate for %d log entries in %s", len(cs.entries), pushcert.Ref)
			return nil
		}
		tip, _, rerr := cs.main.ResolveRef(pushcert.Ref)
		if rerr != nil || tip == cs.old {
			break
		}
		cs.old = tip
		if cs.new, err = pushcert.Append(cs.main, tip, cs.raw, cs.entries, time.Now()); err != nil {
			break
		}
	}
	c.say("rejected: cannot store the push certificate in %s: %v", pushcert.Ref, err)
	c.say("hint: push again; if this persists, the server's administrator checks %s", pushcert.Ref)
	return ErrRejected
}
