package cli

import (
	"path/filepath"
	"strings"
)

// isRemoteHelperName reports whether the program was started as git's
// remote helper for secure:: URLs. On Windows git runs
// "git-remote-secure.exe" (a copy of git-secure.exe: symbolic links need
// privileges there), with either separator and any case of the suffix.
func isRemoteHelperName(arg0 string) bool {
	base := filepath.Base(strings.ReplaceAll(arg0, `\`, "/"))
	if ext := filepath.Ext(base); strings.EqualFold(ext, ".exe") {
		base = strings.TrimSuffix(base, ext)
	}
	return base == "git-remote-secure"
}
