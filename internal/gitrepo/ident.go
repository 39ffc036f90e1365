package gitrepo

import (
	"strings"

	"github.com/git-secure/git-secure/internal/gitrepo/fastpath"
)

// Committer returns the committer's name and e-mail as git would write
// them, from the same sources git uses: GIT_COMMITTER_NAME/EMAIL, then
// committer.name/email, then user.name/email. ok is false when git would
// have to work them out itself (a missing part, a date given in the
// environment) or would rewrite them (characters git strips): then ask
// git (git var GIT_COMMITTER_IDENT).
func (r *Repo) Committer() (name, email string, ok bool) {
	cfg, err := r.ConfigList()
	if err != nil {
		return "", "", false
	}
	return r.committer(cfg)
}

func (r *Repo) committer(cfg []ConfigEntry) (name, email string, ok bool) {
	if _, set := fastpath.LookupEnv(r.env, "GIT_COMMITTER_DATE"); set {
		return "", "", false
	}
	pick := func(env string, keys ...string) string {
		if v, set := fastpath.LookupEnv(r.env, env); set {
			return v // even empty: then plainIdentPart refuses it
		}
		for _, k := range keys {
			if v := configString(cfg, k); v != "" {
				return v
			}
		}
		return ""
	}
	name = pick("GIT_COMMITTER_NAME", "committer.name", "user.name")
	email = pick("GIT_COMMITTER_EMAIL", "committer.email", "user.email")
	if !plainIdentPart(name) || !plainIdentPart(email) {
		return "", "", false
	}
	return name, email, true
}

// plainIdentPart reports whether git would write s unchanged in an
// identity: not empty, no '<', '>' or control characters, and none of
// the characters git trims ("crud") at either end.
func plainIdentPart(s string) bool {
	if s == "" || strings.ContainsAny(s, "<>") || strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
		return false
	}
	crud := func(c byte) bool { return c <= ' ' || strings.IndexByte(".,:;<>\"\\'", c) >= 0 }
	return !crud(s[0]) && !crud(s[len(s)-1])
}

// configString is key's value in cfg, "" when unset.
func configString(cfg []ConfigEntry, key string) string {
	v, _ := lookupConfig(cfg, key)
	return v
}
