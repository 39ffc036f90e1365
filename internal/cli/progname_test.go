package cli

import "testing"

func TestIsRemoteHelperName(t *testing.T) {
	for _, tc := range []struct {
		arg0 string
		want bool
	}{
		{"git-remote-secure", true},
		{"/usr/local/bin/git-remote-secure", true},
		{`C:\Program Files\Git\mingw64\libexec\git-core\git-remote-secure.exe`, true},
		{`C:/tools/git-remote-secure.EXE`, true},
		{"git-secure", false},
		{`C:\tools\git-secure.exe`, false},
		{"git-remote-secure.sh", false},
		{"git-remote-secure-x", false},
	} {
		if got := isRemoteHelperName(tc.arg0); got != tc.want {
			t.Errorf("isRemoteHelperName(%q) = %v, want %v", tc.arg0, got, tc.want)
		}
	}
}
