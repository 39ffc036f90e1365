package policy

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestSignedPushField: a rule that requires signed pushes is stored with
// x-git-secure-signed-push "true", read back as such, and described; any
// other value is malformed; a rule without it keeps its bytes.
func TestSignedPushField(t *testing.T) {
	_, base, p := staged(t)
	_, before := encode(t, p)
	if bytes.Contains(before, []byte(fieldSigned)) {
		t.Fatalf("a policy without the rule has the field:\n%s", before)
	}
	must(t, p.AddRule(base, Rule{Name: "release", Refs: []string{"refs/heads/release/*"}, Allow: []string{"alice"}, Threshold: 1, SignedPush: true}, t1))
	r, tg := encode(t, p)
	if !bytes.Contains(tg, []byte(`"`+fieldSigned+`":"true"`)) {
		t.Fatalf("stored rule lacks %s:\n%s", fieldSigned, tg)
	}
	q, err := Parse(r, tg)
	must(t, err)
	var rel *Rule
	for _, x := range q.RulesFor("refs/heads/release/1") {
		if x.Name == "release" {
			rel = x
		} else if x.SignedPush {
			t.Errorf("rule %s requires signed pushes", x.Name)
		}
	}
	if rel == nil || !rel.SignedPush {
		t.Fatalf("parsed rule release %+v: want SignedPush", rel)
	}
	if got := describeRule(rel); !strings.Contains(got, "signed pushes") {
		t.Errorf("description %q does not say signed pushes", got)
	}
	for _, v := range []string{`"false"`, `"yes"`, `true`} {
		bad := bytes.Replace(tg, []byte(`"`+fieldSigned+`":"true"`), []byte(`"`+fieldSigned+`":`+v), 1)
		if _, err := Parse(r, bad); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "rule release: "+fieldSigned+" must be \"true\" when present") {
			t.Errorf("value %s: %v", v, err)
		}
	}
}
