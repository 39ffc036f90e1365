package gitrepo

// LocalConfig returns the value of key in the repository's own
// configuration file only (git config --local --get), not the user's or
// the system's: what this repository chose, as opposed to what a
// user-wide install (git secure hooks install --global) sets everywhere.
// ok is false if the key is not set there.
func (r *Repo) LocalConfig(key string) (string, bool, error) {
	return r.configGet("config --local", r.fast.LocalConfig, key)
}
