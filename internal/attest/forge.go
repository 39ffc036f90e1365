package attest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/git-secure/git-secure/internal/gitrepo"
)

// PredicateForgeReview is the predicate type of a forge review recorded
// by a forge bridge (a CI job holding a forge app key the root trusts):
// "the forge says that Account reviewed pull request PullRequest, and the
// review (State) approves, or no longer approves, moving Ref from From to
// To". The bridge signs; the person is the one the policy maps Account to.
const PredicateForgeReview = "https://git-secure.dev/attestation/forge-review/v1"

// Review states. A withdrawn record (a review dismissed, made stale by a
// push, or replaced by a request for changes) cancels the approving record
// of the same review: the store is append-only, so withdrawal is a record
// of its own.
const (
	ReviewApproved  = "approved"
	ReviewWithdrawn = "withdrawn"
)

// Forges a review may come from.
var Forges = []string{"github", "gitlab"}

// forgeReviewDomain separates forge review directories and file names.
const forgeReviewDomain = "git-secure-forge-review-v1"

// ForgeReview is the predicate of a forge review statement.
type ForgeReview struct {
	Ref         string
	From, To    gitrepo.Hash
	Forge       string // "github" or "gitlab"
	Account     string // the reviewer's login on the forge
	Review      string // the forge's review id, decimal
	PullRequest string // the pull or merge request number, decimal
	State       string // ReviewApproved or ReviewWithdrawn
	// ToTree, when not zero, binds the record to the tree of To instead
	// of To itself (a tree-bound forge review): it then approves moving
	// Ref from From to any commit whose tree is ToTree, such as the
	// commit a merge button, a squash or a rebase merge makes, which no
	// reviewer saw but whose content is the reviewed result. It is
	// stored in ForgeReviewTreeDir and counts only for rules that accept
	// tree-bound approvals (docs/format.md, "Forge merges").
	ToTree gitrepo.Hash
	// Repository is the repository on the forge the review was made in
	// (GitHub OWNER/NAME; GitLab the project's numeric id or full path),
	// AccountID the reviewer's numeric account id there (decimal). Both
	// are "" in records of a git-secure before they were recorded: such
	// a record counts only under a forge app bound to no repository and
	// for a person mapped with no account id (docs/format.md).
	Repository string
	AccountID  string
}

// The patterns are compiled on first use (sync.OnceValue), not when the
// binary starts: every hook and helper start paid for them (a bounded
// repetition such as {0,254} compiles to hundreds of instructions).
var (
	decimalRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[1-9][0-9]{0,18}$`) })
	// accountRe covers GitHub logins (letters, digits, '-') and GitLab
	// usernames (also '_' and '.'), at most 255 bytes.
	accountRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,254}$`) })
	// A GitHub owner or repository name; a GitLab project id or path
	// segment.
	repoPartRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`) })
	projectSegRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$`) })
)

// ValidForgeAccount reports whether login can be an account of forge.
func ValidForgeAccount(forge, login string) error {
	if !validForge(forge) {
		return malformed("unknown forge %q (want one of %s)", forge, strings.Join(Forges, ", "))
	}
	if !accountRe().MatchString(login) || (forge == "github" && (len(login) > 39 || strings.ContainsAny(login, "_."))) {
		return malformed("%q is not a %s account name", login, forge)
	}
	return nil
}

// ValidForgeAccountID reports whether id can be a forge's numeric account
// id: a decimal number without leading zeros, at most 19 digits.
func ValidForgeAccountID(id string) error {
	if !decimalRe().MatchString(id) {
		return malformed("forge account id %q is not a decimal number (without leading zeros, at most 19 digits)", id)
	}
	return nil
}

// ValidForgeRepository reports whether repo can name a repository of
// forge: GitHub OWNER/NAME; GitLab a numeric project id or a full path
// (group, subgroups and name, at most 21 segments).
func ValidForgeRepository(forge, repo string) error {
	switch forge {
	case "github":
		owner, name, ok := strings.Cut(repo, "/")
		if ok && repoPartRe().MatchString(owner) && repoPartRe().MatchString(name) {
			return nil
		}
		return malformed("%q is not a GitHub repository OWNER/NAME", repo)
	case "gitlab":
		if decimalRe().MatchString(repo) {
			return nil
		}
		segs := strings.Split(repo, "/")
		ok := len(segs) >= 2 && len(segs) <= 21
		for _, s := range segs {
			ok = ok && projectSegRe().MatchString(s)
		}
		if ok {
			return nil
		}
		return malformed("%q is not a GitLab project id or GROUP/NAME path", repo)
	}
	return malformed("unknown forge %q (want one of %s)", forge, strings.Join(Forges, ", "))
}

// SameForgeRepository reports whether a and b name the same repository
// of a forge: GitHub and GitLab resolve names case-insensitively.
func SameForgeRepository(a, b string) bool { return strings.EqualFold(a, b) }

func validForge(f string) bool {
	for _, x := range Forges {
		if f == x {
			return true
		}
	}
	return false
}

func (f ForgeReview) validate() error {
	if err := (Approval{Ref: f.Ref, From: f.From, To: f.To}).validate(); err != nil {
		return err
	}
	if err := ValidForgeAccount(f.Forge, f.Account); err != nil {
		return err
	}
	if !decimalRe().MatchString(f.Review) || !decimalRe().MatchString(f.PullRequest) {
		return malformed("forge review and pull request must be decimal numbers")
	}
	if f.State != ReviewApproved && f.State != ReviewWithdrawn {
		return malformed("forge review state %q is not %s or %s", f.State, ReviewApproved, ReviewWithdrawn)
	}
	if f.To.IsZero() && !f.ToTree.IsZero() {
		return malformed("forge review of a deletion has toTree")
	}
	if f.Repository != "" {
		if err := ValidForgeRepository(f.Forge, f.Repository); err != nil {
			return err
		}
	}
	if f.AccountID != "" {
		if err := ValidForgeAccountID(f.AccountID); err != nil {
			return err
		}
	}
	return nil
}

// Statement returns the canonical in-toto Statement v1 JSON of f.
func (f ForgeReview) Statement() ([]byte, error) {
	if err := f.validate(); err != nil {
		return nil, err
	}
	pred := map[string]any{
		"formatVersion": FormatVersion,
		"ref":           f.Ref,
		"from":          hexOf(f.From),
		"to":            hexOf(f.To),
		"forge":         f.Forge,
		"account":       f.Account,
		"review":        f.Review,
		"pullRequest":   f.PullRequest,
		"state":         f.State,
	}
	if !f.ToTree.IsZero() {
		pred["toTree"] = hexOf(f.ToTree)
	}
	if f.Repository != "" {
		pred["repository"] = f.Repository
	}
	if f.AccountID != "" {
		pred["accountId"] = f.AccountID
	}
	return encodeStatement(f.Ref, "gitCommit", hexOf(f.To), PredicateForgeReview, pred)
}

// ParseForgeReview parses and strictly validates a forge review statement;
// errors wrap ErrMalformed.
func ParseForgeReview(statement []byte) (ForgeReview, error) {
	var f ForgeReview
	name, subj, pred, err := parseStatement(statement, PredicateForgeReview, "gitCommit")
	if err != nil {
		return f, err
	}
	if err := checkKeys(pred, "forge review predicate", []string{"formatVersion", "ref", "from", "to", "forge", "account", "review", "pullRequest", "state"}, "toTree", "repository", "accountId"); err != nil {
		return f, malformed("%v", err)
	}
	for key, dst := range map[string]*string{"ref": &f.Ref, "forge": &f.Forge, "account": &f.Account, "review": &f.Review, "pullRequest": &f.PullRequest, "state": &f.State} {
		if *dst, err = asString(pred[key], "predicate "+key); err != nil {
			return ForgeReview{}, malformed("%v", err)
		}
	}
	if f.From, err = predHash(pred, "from"); err != nil {
		return ForgeReview{}, err
	}
	if f.To, err = predHash(pred, "to"); err != nil {
		return ForgeReview{}, err
	}
	if _, ok := pred["toTree"]; ok {
		if f.ToTree, err = predHash(pred, "toTree"); err != nil {
			return ForgeReview{}, err
		}
		if f.ToTree.IsZero() {
			return ForgeReview{}, malformed("forge review toTree is present but zero")
		}
	}
	// Optional strings: present means not empty (one encoding per record).
	for key, dst := range map[string]*string{"repository": &f.Repository, "accountId": &f.AccountID} {
		if v, ok := pred[key]; ok {
			if *dst, err = asString(v, "predicate "+key); err != nil || *dst == "" {
				return ForgeReview{}, malformed("forge review %s must be a non-empty string", key)
			}
		}
	}
	if name != f.Ref || subj != f.To {
		return ForgeReview{}, malformed("subject %s@%s does not match the predicate's %s to %s", name, hexOf(subj), f.Ref, hexOf(f.To))
	}
	if err := f.validate(); err != nil {
		return ForgeReview{}, err
	}
	return f, nil
}

// ForgeReviewDir returns the store directory of forge reviews of ref
// moving from from to to: "forge-reviews/" + hex(SHA-256(domain NUL ref
// NUL from-hex NUL to-hex)). A verifier computes it from the update it
// checks, as for approvals.
func ForgeReviewDir(ref string, from, to gitrepo.Hash) string {
	return "forge-reviews/" + hashParts(forgeReviewDomain, ref, hexOf(from), hexOf(to))
}

// ForgeReviewTreeDir returns the store directory of tree-bound forge
// reviews of ref moving from from to a commit whose tree is tree:
// "forge-reviews-tree/" + hex(SHA-256(domain NUL "tree" NUL ref NUL
// from-hex NUL tree-hex)).
func ForgeReviewTreeDir(ref string, from, tree gitrepo.Hash) string {
	return "forge-reviews-tree/" + hashParts(forgeReviewDomain, "tree", ref, hexOf(from), hexOf(tree))
}

// ForgeReviewFile returns the file name of one forge review record:
// hex(SHA-256(domain NUL "file" NUL signer-file NUL forge NUL review NUL
// state [NUL repository])) + ".json", with signer-file the bridge key's
// SignerFile and the repository part only when the record names one. Each
// review and state has a file of its own, so a withdrawal never replaces
// the approval it cancels (the store is append-only), and a record naming
// its repository never lands on an older one's file (the store keeps the
// first), so an older record can be recorded again.
func ForgeReviewFile(signerFile, forge, repository, review, state string) string {
	if repository == "" {
		return hashParts(forgeReviewDomain, "file", signerFile, forge, review, state) + ".json"
	}
	return hashParts(forgeReviewDomain, "file", signerFile, forge, review, state, repository) + ".json"
}

func hashParts(parts ...string) string {
	h := sha256.New()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// CheckForgeReviewFile checks a stored forge review record: its file name
// belongs to its signer and statement, and it is in the directory of the
// update it names. It returns the parsed statement.
func CheckForgeReviewFile(dir, name string, e *Envelope) (ForgeReview, error) {
	f, err := ParseForgeReview(e.Payload)
	if err != nil {
		return f, err
	}
	signer, err := signerFileForKeyID(e.KeyID)
	if err != nil {
		return f, err
	}
	if want := ForgeReviewFile(signer, f.Forge, f.Repository, f.Review, f.State); name != want {
		return f, fmt.Errorf("%w: forge review stored as %q, belongs in %q", ErrMismatch, name, want)
	}
	want := ForgeReviewDir(f.Ref, f.From, f.To)
	if !f.ToTree.IsZero() {
		want = ForgeReviewTreeDir(f.Ref, f.From, f.ToTree)
	}
	if dir != want {
		return f, fmt.Errorf("%w: forge review belongs in %s, not %s", ErrMismatch, want, dir)
	}
	return f, nil
}

func isForgeReview(statement []byte) bool {
	_, err := ParseForgeReview(statement)
	return err == nil
}
