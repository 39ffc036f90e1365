package rsl_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/git-secure/git-secure/internal/rsl"
)

// TestOrgField: an entry may name the organisation policy version it is
// judged under, as its last line, strictly.
func TestOrgField(t *testing.T) {
	withOrg := msgUpdate + "org: 4 " + c40 + "\n"
	e, err := rsl.Decode([]byte(withOrg))
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if e.Org == nil || e.Org.Number != 4 || e.Org.ID != hx('c') {
		t.Fatalf("Org = %+v, want 4 %s", e.Org, c40)
	}
	again, err := e.Encode()
	if err != nil || string(again) != withOrg {
		t.Fatalf("Encode = %q, %v; want %q", again, err, withOrg)
	}
	ann, err := rsl.Decode([]byte(msgAnnotate + "org: 1 " + a40 + "\n"))
	if err != nil || ann.Org == nil || ann.Org.Number != 1 {
		t.Fatalf("annotation with org: %+v, %v", ann, err)
	}
	plain, err := rsl.Decode([]byte(msgUpdate))
	if err != nil || plain.Org != nil {
		t.Fatalf("entry without org: Org = %+v, %v", plain.Org, err)
	}

	bad := []struct{ name, msg, want string }{
		{"policy entry", msgCreatePolicy + "org: 4 " + c40 + "\n", "a policy entry names no organisation policy version"},
		{"zero number", msgUpdate + "org: 0 " + c40 + "\n", "org must name an entry number"},
		{"leading zero", msgUpdate + "org: 04 " + c40 + "\n", "org number: not a canonical number"},
		{"zero id", msgUpdate + "org: 4 " + zero40 + "\n", "org must name an entry number"},
		{"short id", msgUpdate + "org: 4 " + c40[:39] + "\n", "org id:"},
		{"upper-case id", msgUpdate + "org: 4 " + strings.ToUpper(c40) + "\n", "org id:"},
		{"no id", msgUpdate + "org: 4\n", `org must be "<number> <entry-id>"`},
		{"two spaces", msgUpdate + "org: 4  " + c40 + "\n", "org id:"},
		{"twice", msgUpdate + "org: 4 " + c40 + "\norg: 5 " + c40 + "\n", "unexpected line"},
		{"before the ref fields", strings.Replace(msgUpdate, "type: ref\n", "type: ref\norg: 4 "+c40+"\n", 1), "expected field ref"},
		{"too large", msgUpdate + "org: 1000000000000001 " + c40 + "\n", "org must name an entry number"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rsl.Decode([]byte(tc.msg))
			if !errors.Is(err, rsl.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Decode = %v, want an ErrMalformed containing %q", err, tc.want)
			}
		})
	}
	e2 := &rsl.Entry{Number: 1, Type: rsl.TypeRef, Ref: rsl.PolicyRef, New: hx('a'), Org: &rsl.OrgVersion{Number: 1, ID: hx('b')}}
	if _, err := e2.Encode(); err == nil || !strings.Contains(err.Error(), "policy entry") {
		t.Fatalf("Encode of a policy entry with org = %v", err)
	}
	// The field round-trips through Encode for every entry type that may carry it.
	for _, in := range []rsl.Entry{
		{Number: 3, Type: rsl.TypeRef, Ref: "refs/tags/v1", New: hx('a'), Org: &rsl.OrgVersion{Number: 1e15, ID: hx('f')}},
		{Number: 9, Type: rsl.TypeAnnotation, Skips: []rsl.Skip{{Number: 2, ID: hx('a')}}, Reason: "x", Org: &rsl.OrgVersion{Number: 2, ID: hx('e')}},
	} {
		msg, err := in.Encode()
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		out, err := rsl.Decode(msg)
		if err != nil || !reflect.DeepEqual(*out, in) {
			t.Fatalf("round trip of %+v: %+v, %v", in, out, err)
		}
	}
}
