package remote

import (
	"sort"
	"strings"

	"github.com/git-secure/git-secure/internal/display"
	"github.com/git-secure/git-secure/internal/gitrepo"
	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/rsl"
)

// reviewRef is where a refused update of ref to the object new is
// published for review: a branch no ref rule names, so the server takes it
// from anyone (a path rule without --ref judges only protected refs), or,
// for an annotated tag (tag set), a ref outside refs/tags/ and
// refs/heads/, where no rule reaches, that the approver fetches by name
// (fetch set): a branch cannot hold a tag object, and a review tag under
// refs/tags/ was brought by every git pull and git fetch to every clone,
// the pusher's and the approver's included, and listed by git tag among
// the releases for good.
func reviewRef(ref, new string, tag bool) (review string, fetch bool) {
	name := strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/tags/")
	if !tag {
		return "refs/heads/review/" + strings.ReplaceAll(name, "/", "-") + "-" + shortStr(new), false
	}
	return "refs/review/tags/" + name + "-" + shortStr(new), true
}

// sayReview tells, after a refused push whose entries still needed
// approvals, how to hand the update to a reviewer with plain git: the
// server kept nothing of the push, so the commit must be published before
// anyone can fetch and approve it. Each command is on a line of its own.
func (h *Helper) sayReview(prepared *porcelain.Prepared, failed map[string]string) {
	if len(prepared.Pending) == 0 {
		return
	}
	var waiting []*rsl.Entry
	for _, e := range prepared.Entries {
		if _, refused := failed[e.Ref]; refused && !e.New.IsZero() && pendingFor(prepared.Pending, e.Ref) {
			waiting = append(waiting, e)
		}
	}
	h.sayHandOff(waiting)
}

// sayReviewRefused is sayReview for a push refused before anything was
// sent because the signer may not make a change without someone else's
// approval (a folder or tag rule that does not name them): the refusal
// says who can approve, but nobody can approve a commit they cannot
// fetch. msg is the refusal; changes whose ref it offers to approve get
// the hand-off.
func (h *Helper) sayReviewRefused(changes []porcelain.RefChange, msg string) {
	var waiting []*rsl.Entry
	for _, c := range changes {
		if !c.New.IsZero() && strings.Contains(msg, "git secure attest approve "+c.Ref+" ") {
			waiting = append(waiting, &rsl.Entry{Ref: c.Ref, New: c.New})
		}
	}
	h.sayHandOff(waiting)
}

// sayHandOff prints the review hand-off for the refused updates waiting.
func (h *Helper) sayHandOff(waiting []*rsl.Entry) {
	if len(waiting) == 0 {
		return
	}
	remote := h.Remote
	if remote == h.URL || strings.Contains(remote, "::") {
		remote = h.URL
	}
	news := make([]gitrepo.Hash, len(waiting))
	for i, e := range waiting {
		news[i] = e.New
	}
	// A type that cannot be read leaves the branch form: git names the
	// problem when the push is run.
	types, _ := h.Repo.Git.ObjectTypes(news)
	held := h.heldByRemote(waiting)
	// A dry run sent nothing; the hand-off is the same as after the real
	// push's refusal, so that a user who tries first learns it there.
	kept := "the server kept nothing of this push"
	if h.opts.dryRun {
		kept = "nothing was sent (dry run)"
	}
	if len(held) == len(waiting) {
		h.hintf("the update needs approvals first; %s, but the server has what it sets already:", kept)
	} else {
		h.hintf("the update needs approvals first; %s, so publish it for review:", kept)
	}
	fetches := make([]string, len(waiting))
	for i, e := range waiting {
		if ref, ok := held[i]; ok {
			h.logf("hint:   %s is %s on %s", shortStr(e.New.String()), ref, remote)
			continue
		}
		tag := i < len(types) && types[i] == "tag"
		review, fetch := reviewRef(e.Ref, e.New.String(), tag)
		if fetch {
			fetches[i] = "git fetch " + remote + " " + review + " && "
		}
		h.logf("hint:   git push %s %s:%s", remote, shortStr(e.New.String()), review)
	}
	h.hintf("then a person who may approve runs, after git pull:")
	for i, e := range waiting {
		h.logf("hint:   %sgit secure attest approve %s --to %s && git push", fetches[i], e.Ref, shortStr(e.New.String()))
	}
	if h.opts.dryRun {
		h.hintf("and you run this git push without --dry-run")
	} else {
		h.hintf("and you run this git push again")
	}
}

// heldByRemote finds, for each refused update of waiting, a branch or tag
// of the remote (as last listed) that already holds its new value (a tag
// of a commit on main): the approver can fetch it without a review
// branch. The result maps waiting's index to that ref's name.
func (h *Helper) heldByRemote(waiting []*rsl.Entry) map[int]string {
	names := make([]string, 0, len(h.remote))
	for name := range h.remote {
		if strings.HasPrefix(name, "refs/heads/") || strings.HasPrefix(name, "refs/tags/") {
			names = append(names, name)
		}
	}
	sort.Strings(names) // refs/heads/ before refs/tags/, and the same name every time
	held := map[int]string{}
	for i, e := range waiting {
		for _, name := range names {
			if name != e.Ref && h.remote[name] == e.New {
				held[i] = name
				break
			}
		}
	}
	return held
}

// pendingFor tells whether one of the pending notes is about ref; a note
// naming no ref at all counts for every ref.
func pendingFor(pending []string, ref string) bool {
	for _, p := range pending {
		if strings.Contains(p, ref) || !strings.Contains(p, "refs/") {
			return true
		}
	}
	return false
}

// hintf prints one hint sentence wrapped to display.Width columns.
func (h *Helper) hintf(format string, args ...any) {
	display.Fprintw(h.Err, 0, "git-secure: hint: ", format, args...)
}
