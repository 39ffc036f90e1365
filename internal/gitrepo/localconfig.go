package gitrepo

import (
	"bytes"
	"fmt"
)

// LocalConfig returns the value of key in the repository's own
// configuration file only (git config --local --get), not the user's or
// the system's: what this repository chose, as opposed to what a
// user-wide install (git secure hooks install --global) sets everywhere.
// ok is false if the key is not set there.
func (r *Repo) LocalConfig(key string) (string, bool, error) {
	if err := checkConfigKey(key); err != nil {
		return "", false, err
	}
	out, err := r.run(nil, "config", "--local", "--get", "--null", "--end-of-options", key)
	if err != nil {
		if exitCode(err) == 1 {
			return "", false, nil
		}
		return "", false, fmt.Errorf("gitrepo: config --local %s: %w", key, err)
	}
	v, ok := bytes.CutSuffix(out, []byte{0})
	if !ok {
		return "", false, fmt.Errorf("gitrepo: config --local %s: malformed output", key)
	}
	return string(v), true, nil
}
