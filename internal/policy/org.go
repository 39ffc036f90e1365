package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// An organisation keeps one policy repository (an ordinary git-secure
// repository whose policy is the organisation's); a repository that
// inherits it names it in root.json (fieldOrg: where it lives and the root
// keys that anchor its policy chain). The repository's entries are then
// judged by Inherit(the organisation policy at the version the entry
// records, the repository's own policy). Fetching and verifying the
// organisation repository is internal/org's job.
const (
	fieldOrg = "x-git-secure-org"

	// MaxOrgURLLen bounds an organisation policy URL.
	MaxOrgURLLen = 1024
	// maxOrgRootKeys bounds the pinned organisation root keys.
	maxOrgRootKeys = 32
)

// Org names the organisation policy a repository inherits.
type Org struct {
	// URL is where the organisation policy repository is fetched from.
	URL string
	// RootKeys are the SSH fingerprints that anchor the organisation's
	// policy chain (a root key pin, as secure.rootKeys is for a clone).
	RootKeys []string
	// RootThreshold is how many of RootKeys must have signed the
	// anchoring root version.
	RootThreshold int
}

// Org returns the organisation policy the repository inherits, or nil.
func (p *Policy) Org() *Org {
	o, _ := parseOrg(p.Root.Signed.UnrecognizedFields[fieldOrg])
	return o
}

// checkOrgField validates root.json's fieldOrg when present.
func checkOrgField(fields map[string]any) error {
	v, ok := fields[fieldOrg]
	if !ok {
		return nil
	}
	if _, err := parseOrg(v); err != nil {
		return fmt.Errorf("%w: root.json: %s: %v", ErrMalformed, fieldOrg, err)
	}
	return nil
}

// parseOrg decodes the stored form {"url": ..., "rootKeys": [...],
// "rootThreshold": "N"} strictly; nil, nil when v is absent.
func parseOrg(v any) (*Org, error) {
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 3 {
		return nil, fmt.Errorf("must be an object with exactly url, rootKeys and rootThreshold")
	}
	url, _ := obj["url"].(string)
	keys, okKeys := stringList(obj["rootKeys"])
	n, _ := obj["rootThreshold"].(string)
	if !okKeys {
		return nil, fmt.Errorf("rootKeys must be a list of SSH fingerprints")
	}
	th, err := strconv.Atoi(n)
	if err != nil || strconv.Itoa(th) != n {
		return nil, fmt.Errorf("rootThreshold must be a decimal string")
	}
	o := &Org{URL: url, RootKeys: keys, RootThreshold: th}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

// Validate checks o's fields: a URL git may fetch without running a
// command, distinct sorted SSH fingerprints and a threshold they can meet.
func (o *Org) Validate() error {
	if err := ValidOrgURL(o.URL); err != nil {
		return err
	}
	if len(o.RootKeys) == 0 || len(o.RootKeys) > maxOrgRootKeys {
		return fmt.Errorf("an organisation needs 1 to %d pinned root keys, not %d", maxOrgRootKeys, len(o.RootKeys))
	}
	for i, k := range o.RootKeys {
		if !validFingerprint(k) {
			return fmt.Errorf("root key %q is not an SSH fingerprint (SHA256:..., as ssh-keygen -lf KEY prints it)", truncate(k))
		}
		if i > 0 && o.RootKeys[i-1] >= k {
			return fmt.Errorf("root keys must be distinct and sorted")
		}
	}
	if o.RootThreshold < 1 || o.RootThreshold > len(o.RootKeys) {
		return fmt.Errorf("root threshold %d with %d pinned keys", o.RootThreshold, len(o.RootKeys))
	}
	return nil
}

// ValidOrgURL accepts the URLs git fetches over the network or from a
// path (https, http, ssh, git, file, or scp-like user@host:path) and
// nothing git would hand to a command (ext::, fd::, an option).
func ValidOrgURL(url string) error {
	if url == "" || len(url) > MaxOrgURLLen {
		return fmt.Errorf("the organisation URL must be 1 to %d bytes", MaxOrgURLLen)
	}
	for i := 0; i < len(url); i++ {
		if c := url[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("the organisation URL %q holds a space, control or non-ASCII character", truncate(url))
		}
	}
	for _, scheme := range []string{"https://", "http://", "ssh://", "git://", "file://"} {
		if strings.HasPrefix(url, scheme) && len(url) > len(scheme) {
			return nil
		}
	}
	user, rest, ok := strings.Cut(url, "@")
	host, path, ok2 := strings.Cut(rest, ":")
	if ok && ok2 && validName(user) && host != "" && path != "" && !strings.ContainsAny(user+host, "/:") && !strings.HasPrefix(host, "-") {
		return nil
	}
	return fmt.Errorf("the organisation URL %q is not an https://, http://, ssh://, git://, file:// or user@host:path URL", truncate(url))
}

func validFingerprint(s string) bool {
	b, ok := strings.CutPrefix(s, "SHA256:")
	if !ok || len(b) != 43 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// SetOrg makes the repository inherit the organisation policy o,
// replacing any earlier one. It is a root change (the root keys decide
// whose policy the repository takes).
func (p *Policy) SetOrg(base *Policy, o Org, now time.Time) error {
	o.RootKeys = slices.Clone(o.RootKeys)
	slices.Sort(o.RootKeys)
	o.RootKeys = slices.Compact(o.RootKeys)
	if o.RootThreshold == 0 {
		o.RootThreshold = len(o.RootKeys)
	}
	if err := o.Validate(); err != nil {
		return invalid("%v", err)
	}
	p.Root.Signed.UnrecognizedFields[fieldOrg] = map[string]any{
		"url": o.URL, "rootKeys": anyList(o.RootKeys), "rootThreshold": strconv.Itoa(o.RootThreshold),
	}
	return p.reindexRoot(base, now)
}

// RemoveOrg stops inheriting the organisation policy. It is a root change.
func (p *Policy) RemoveOrg(base *Policy, now time.Time) error {
	if p.Org() == nil {
		return invalid("the policy inherits no organisation policy")
	}
	delete(p.Root.Signed.UnrecognizedFields, fieldOrg)
	return p.reindexRoot(base, now)
}
