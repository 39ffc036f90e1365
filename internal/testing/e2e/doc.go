// Package e2e holds git-secure's end-to-end tests: the transparent workflow
// (plain git push, fetch, pull and clone carrying and checking the
// Reference State Log through git-remote-secure and the server's
// pre-receive hook) run with the built binary against real servers on
// loopback: a file:// bare repository, git daemon, and git http-backend
// behind net/http/cgi. Each person (alice, bob, mallory, an old client
// without git-secure) has their own HOME, SSH key and clone.
//
// The package has no code of its own; everything is in its _test.go files.
// Run with:
//
//	go test ./internal/testing/e2e/
//	go test -run '^$' -bench . ./internal/testing/e2e/
package e2e
