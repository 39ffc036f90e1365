// Command git-secure protects a git repository with a signed Reference
// State Log and a TUF policy. Git runs it as "git secure ..."; see
// "git secure --help".
package main

import (
	"os"

	"github.com/git-secure/git-secure/internal/cli"
)

func main() { os.Exit(cli.Run()) }
