package remote

import (
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/pushcert"
)

// takePushCerts brings, after a signed push that moved the log, the
// server's store of push certificates (refs/secure/pushcerts), which the
// server's hook just added this push's certificate to: without it this
// clone's own verification would find the entries it pushed without
// their certificate until the next fetch. The store is not trusted (each
// certificate counts only on its own signature) and only fast-forwards
// here; a failure is a warning, the next fetch brings it.
func (h *Helper) takePushCerts() {
	g := h.Repo.Git
	h.fetched = true // cleanup drops the namespace
	tmp := h.namespace + "/" + pushcert.Ref
	args := h.urlArgs("fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--no-recurse-submodules", "--no-auto-maintenance", "--", h.URL, "+"+pushcert.Ref+":"+tmp)
	if _, err := g.Run(bgctx(), nil, args...); err != nil {
		if h.opts.signed == "if-asked" {
			return // the server may not have asked for a certificate
		}
		h.logf("warning: pushed, but cannot fetch %s (%v): git fetch brings the certificate of this push", pushcert.Ref, err)
		return
	}
	want, ok, err := g.ResolveRef(tmp)
	if err != nil || !ok {
		return
	}
	have, _, err := g.ResolveRef(pushcert.Ref)
	if err != nil || have == want || (!have.IsZero() && !mustAncestor(g, have, want)) {
		return
	}
	if err := g.UpdateRefs([]gitrepo.RefUpdate{{Name: pushcert.Ref, Old: have, New: want}}, "git-secure: push certificates of "+h.Remote); err != nil {
		h.logf("warning: pushed, but cannot update %s (%v): git fetch brings the certificate of this push", pushcert.Ref, err)
	}
}
