package policy

import (
	"bytes"
	"fmt"
	"time"

	"github.com/git-secure/git-secure/internal/strictjson"
)

// expiresLayout is the one form of a metadata file's signed.expires that
// git-secure reads: the form it has always written (expiry: UTC, whole
// seconds, a literal Z). go-tuf's decoder would take any RFC 3339 time,
// with an offset (+02:00, +00:00) or fractional seconds, and time.Parse
// takes a fraction even where the layout has none, so each form is
// checked here, not left to the decoder.
const expiresLayout = "2006-01-02T15:04:05Z"

// expiresWant says what checkExpires and checkExpiresRaw want.
const expiresWant = "signed.expires must be a UTC time in whole seconds written YYYY-MM-DDThh:mm:ssZ, as git-secure writes it"

// checkExpires refuses a decoded expires that is not in expiresLayout's
// form: another location than UTC (an offset, even +00:00 read where the
// local zone is UTC), or a fraction of a second. name is the file.
func checkExpires(name string, t time.Time) error {
	if t.Location() != time.UTC || t.Nanosecond() != 0 || t.Year() < 1 || t.Year() > 9999 {
		return fmt.Errorf("%w: %s: %s, not %q", ErrMalformed, name, expiresWant, t.Format(time.RFC3339Nano))
	}
	return nil
}

// checkExpiresRaw refuses signed.expires as written (raw, a JSON value
// from strictjson.Members; nil when the member is missing) unless it is a
// JSON string in expiresLayout's form, which its decoding gives back byte
// for byte. It runs before decoding (CheckStaged), and when decoding
// failed, so that the error names the field rather than the form of the
// whole file.
func checkExpiresRaw(name string, raw []byte) error {
	if raw == nil {
		return fmt.Errorf("%w: %s: %s; it is missing", ErrMalformed, name, expiresWant)
	}
	if len(raw) == len(expiresLayout)+2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		s := string(raw[1 : len(raw)-1])
		if t, err := time.Parse(expiresLayout, s); err == nil && t.Format(expiresLayout) == s {
			return nil
		}
	}
	if len(raw) > 48 {
		raw = append(bytes.Clone(raw[:45]), "..."...)
	}
	return fmt.Errorf("%w: %s: %s, not %s", ErrMalformed, name, expiresWant, raw)
}

// diagnoseExpires is checkExpiresRaw on a whole metadata file, for a file
// that did not decode: nil when its expires is in form (or the file is
// too broken to find it; the decoding error says why).
func diagnoseExpires(name string, data []byte) error {
	top, err := strictjson.Members(data)
	if err != nil || top["signed"] == nil {
		return nil
	}
	signed, err := strictjson.Members(top["signed"])
	if err != nil {
		return nil
	}
	return checkExpiresRaw(name, signed["expires"])
}
