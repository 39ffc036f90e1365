package policy

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// FoldPath returns the key under which common filesystems store a file
// path, so that two paths with the same key are one file in some checkout:
//
//   - case-insensitive file systems (APFS and HFS+ on macOS, NTFS on
//     Windows) merge upper and lower case, for all of Unicode: U+017F
//     LATIN SMALL LETTER LONG S is "s", U+212A KELVIN SIGN is "k". The
//     key takes each character's simple upper case (NTFS compares through
//     a 1:1 upper-case table) and then full Unicode case folding (APFS);
//   - HFS+ stores names decomposed and APFS compares them normalized, so
//     canonically equivalent spellings ("é" and "e" + U+0301) are one name.
//     The key is in NFC;
//   - HFS+ ignores some code points in names, the ones git's own
//     core.protectHFS skips (utf8.c, next_hfs_char): U+200C..U+200F,
//     U+202A..U+202E, U+206A..U+206F and U+FEFF. The key drops them;
//   - Win32 strips the trailing dots and spaces of each path component
//     ("crypto." and "crypto " are "crypto"), as git's core.protectNTFS
//     reasons; the key strips them too, unless nothing would remain;
//   - on NTFS "name:stream" and "name::$DATA" name a stream of "name". The
//     key cuts each component at its first ':' (unless it starts with one);
//   - Windows separates components with '\' as well as '/'. The key turns
//     '\' into '/'.
//
// NTFS 8.3 short names ("SECURI~1" for "security-team") are not modelled:
// whether a short name exists and which long name it stands for depends on
// the volume and on the other names in the directory, not on the path.
//
// Bytes that are not UTF-8 become U+FFFD, so distinct invalid spellings
// share a key: a key merges more names, never fewer. FoldPath is
// idempotent, and for a path of ASCII letters, digits, '/', '-', '_' and
// inner dots it is the path in lower case.
func FoldPath(path string) string {
	if plainASCII(path) {
		return asciiLower(path)
	}
	path = strings.Map(dropIgnorable, path)
	parts := strings.Split(strings.ReplaceAll(path, `\`, "/"), "/")
	for i, c := range parts {
		parts[i] = foldComponent(c)
	}
	return strings.Join(parts, "/")
}

// maxFoldRounds bounds the fold-normalize loop of foldComponent. Case
// folding and normalization settle after one round on the inputs tried
// (FuzzFoldPath checks that the key is idempotent); the loop is a margin
// for a character whose folded form folds again.
const maxFoldRounds = 4

func foldComponent(c string) string {
	if i := strings.IndexByte(c, ':'); i > 0 {
		c = c[:i]
	}
	for range maxFoldRounds {
		next := foldCase(c)
		if next == c {
			break
		}
		c = next
	}
	if t := strings.TrimRight(c, ". "); t != "" {
		c = t
	}
	return c
}

// foldCase is one round of: decompose, simple upper case, full case
// folding, compose. A cases.Caser keeps state, so each call makes its own.
func foldCase(s string) string {
	s = norm.NFD.String(s)
	s = strings.Map(unicode.ToUpper, s)
	s = cases.Fold().String(s)
	return norm.NFC.String(s)
}

// dropIgnorable maps the code points HFS+ ignores in names to nothing and
// bytes that are not UTF-8 (which strings.Map hands over as RuneError) to
// U+FFFD.
func dropIgnorable(r rune) rune {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return -1
	}
	return r
}

// plainASCII reports whether FoldPath(s) is simply s in lower case: ASCII
// without ':' or '\' and no component ending in a dot or a space.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c == ':', c == '\\':
			return false
		case c == '.' || c == ' ':
			if i+1 == len(s) || s[i+1] == '/' {
				return false
			}
		}
	}
	return true
}

// ShowPath returns path for a message: as it is when it is a plain name,
// otherwise quoted with Go escapes (so that invisible code points, trailing
// spaces and look-alike letters show) followed by the protected path it
// is the same file as on some checkout.
func ShowPath(path string) string {
	key := FoldPath(path)
	if key == asciiLower(path) {
		return path
	}
	return fmt.Sprintf("%s (%s on a macOS or Windows checkout)", strconv.QuoteToASCII(path), key)
}

// protectsDirectory reports whether the path key names a directory that the
// pattern key spells out literally above its last component: "src" and
// "src/crypto" for "src/crypto/**" or "src/crypto/*.c", "src" for
// "src/aes.c", nothing for "**/x" or "*/crypto/**".
func protectsDirectory(patternKey, key string) bool {
	// key is the pattern up to a slash, with no wildcard in it (leading
	// slashes, empty components, spell nothing). Without splitting the
	// pattern: CoversPath asks this of every changed path (a tree bomb's
	// million), and the split was most of what it allocated.
	if key == "" {
		return strings.HasPrefix(patternKey, "/")
	}
	patternKey = strings.TrimLeft(patternKey, "/")
	return len(key) < len(patternKey) && patternKey[len(key)] == '/' &&
		strings.HasPrefix(patternKey, key) && !strings.ContainsAny(key, "*?")
}

// attributesFile is the key of a .gitattributes file's name.
const attributesFile = ".gitattributes"

// modulesFile is the key of the root's .gitmodules: it names each
// submodule's URL and branch, so that "git submodule update --remote"
// (and a first "git submodule update" of a clone without the pinned
// commit) fetches from wherever it says, into protected paths, while the
// protected paths themselves stay unchanged. git reads it at the root
// only.
const modulesFile = ".gitmodules"

// attributesReach reports whether the path key names the root's
// .gitmodules (modulesFile), or a .gitattributes file whose directory may
// hold files the pattern key matches: the root's always; another when the pattern's literal leading components lead into
// that directory, or a wildcard component comes first ("src/.gitattributes"
// for "src/crypto/**", "**/x" or "*/crypto/*"; not "docs/.gitattributes").
func attributesReach(patternKey, key string) bool {
	if key == modulesFile {
		return true
	}
	dir, name := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		dir, name = key[:i], key[i+1:]
	}
	if name != attributesFile {
		return false
	}
	if dir == "" {
		return true
	}
	dirs, comps := strings.Split(dir, "/"), strings.Split(patternKey, "/")
	for i, c := range comps {
		switch {
		case i == len(dirs):
			return true // the pattern goes on below dir
		case strings.ContainsAny(c, "*?"):
			return true // may match dir's components
		case c != dirs[i]:
			return false
		}
	}
	return false // the pattern names dir itself or a file above it
}
