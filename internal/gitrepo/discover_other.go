//go:build !unix

package gitrepo

import "os"

// ownedByMe is false where ownership is not a uid: git decides (Open).
func ownedByMe(os.FileInfo) bool { return false }

func sameDevice(a, b os.FileInfo) bool { return false }
