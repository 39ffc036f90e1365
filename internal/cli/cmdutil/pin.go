package cmdutil

import (
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/git-secure/git-secure/internal/porcelain"
	"github.com/git-secure/git-secure/internal/report"
)

// RootKeyFlag and RootThresholdFlag pin the root of trust on the command
// line (a new flag value each call: one command's parse never leaks into
// another's). def says where the pin comes from without the flag.
func RootKeyFlag(def string) cli.Flag {
	return &cli.StringSliceFlag{Name: "root-key", Usage: "pin the root of trust to the root key with this `SHA256:...` fingerprint (repeatable; ssh-keygen -lf KEY.pub prints it): some root version of the log must be signed by the pinned keys themselves, every later one by its rotation's keys (default: " + def + ")"}
}

// RootThresholdFlag: see RootKeyFlag.
func RootThresholdFlag(def string) cli.Flag {
	return &cli.IntFlag{Name: "root-threshold", Usage: "how many (`N`) of the pinned root keys must have signed that root version", DefaultText: def}
}

// Pin is the root pin a command was given on its command line; the Set
// fields say whether each flag was given at all.
type Pin struct {
	Keys         []string
	KeysSet      bool
	Threshold    int
	ThresholdSet bool
}

// PinOf reads --root-key and --root-threshold.
func PinOf(c *cli.Context) Pin {
	return Pin{Keys: PinFlags(c.StringSlice("root-key")), KeysSet: c.IsSet("root-key"),
		Threshold: c.Int("root-threshold"), ThresholdSet: c.IsSet("root-threshold")}
}

// RootPin returns the pin of a command: --root-key and --root-threshold,
// else git config secure.rootKeys and secure.rootThreshold.
func RootPin(pin Pin, r *porcelain.Repo) ([]string, int, error) {
	var keys []string
	var threshold int
	if pin.KeysSet {
		keys = pin.Keys // the configured pin is replaced, not read
	} else {
		var err error
		if keys, threshold, err = r.PinnedRoot(); err != nil {
			return nil, 0, err
		}
	}
	if pin.ThresholdSet {
		threshold = pin.Threshold
	}
	return keys, threshold, nil
}

// PinFlags accepts each --root-key value as one fingerprint or several
// separated by spaces (as secure.rootKeys has them).
func PinFlags(vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, strings.Fields(v)...)
	}
	return out
}

// ParseTimeFlag reads the RFC 3339 value v of flag --name.
func ParseTimeFlag(name, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, report.Usagef("--%s %q: want an RFC 3339 time such as 2026-01-02T03:04:05Z", name, v)
	}
	return t.UTC(), nil
}
