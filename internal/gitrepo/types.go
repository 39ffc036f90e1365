package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
)

// ObjectTypes returns the type of each object ("commit", "tag", ...; ""
// for a missing one) through one "git cat-file --batch-check" whose
// requests are written ahead, so that thousands of lookups cost no round
// trip each (verify --at tells the tags among many recorded values).
func (r *Repo) ObjectTypes(hashes []Hash) ([]string, error) {
	if r.isClosed() {
		return nil, errClosed
	}
	if len(hashes) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch-check")
	cmd.Dir, cmd.Env = r.dir, r.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &limitedBuffer{max: 4096}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("gitrepo: start git cat-file: %w", err)
	}
	writeErr := make(chan error, 1)
	go func() { writeErr <- writeRequests(stdin, hashes) }()
	c := &catFile{stdout: bufio.NewReaderSize(stdout, 64<<10)}
	types := make([]string, len(hashes))
	readErr := func() error {
		for i, h := range hashes {
			line, err := c.readLine()
			if err != nil {
				return err
			}
			info, err := parseBatchHeader(line, h)
			if err != nil {
				return err
			}
			if !info.missing {
				types[i] = info.typ
			}
		}
		return nil
	}()
	cancel()
	_ = cmd.Wait()
	if werr := <-writeErr; readErr == nil && werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		readErr = werr
	}
	if readErr != nil {
		if s := stderr.String(); s != "" {
			return nil, fmt.Errorf("gitrepo: git cat-file --batch-check: %w (stderr: %s)", readErr, truncate(strings.TrimSpace(s), 200))
		}
		return nil, fmt.Errorf("gitrepo: git cat-file --batch-check: %w", readErr)
	}
	return types, nil
}
