package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// FirstParents returns tip and its first-parent ancestors, newest first, at
// most max of them (one "git rev-list" process).
func (r *Repo) FirstParents(tip Hash, max int) ([]Hash, error) {
	out, err := r.Run(context.Background(), nil, "rev-list", "--first-parent", "--max-count="+strconv.Itoa(max), tip.String(), "--")
	if err != nil {
		return nil, fmt.Errorf("gitrepo: list %s: %w", tip, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	hashes := make([]Hash, 0, len(lines))
	for _, l := range lines {
		h, err := ParseHash(l)
		if err != nil {
			return nil, fmt.Errorf("gitrepo: list %s: %w", tip, err)
		}
		hashes = append(hashes, h)
	}
	return hashes, nil
}

// ReadCommitsPipelined reads the commits hashes in order through a
// dedicated "git cat-file --batch" whose requests are written ahead by a
// goroutine, so that reading thousands of objects costs no round trip per
// object. fn is called for each commit in order; an error from fn stops
// the reading.
func (r *Repo) ReadCommitsPipelined(hashes []Hash, fn func(*Commit) error) error {
	if r.isClosed() {
		return errClosed
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = r.dir, r.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr := &limitedBuffer{max: 4096}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("gitrepo: start git cat-file: %w", err)
	}
	writeErr := make(chan error, 1)
	go func() { writeErr <- writeRequests(stdin, hashes) }()
	readErr := readCommitStream(bufio.NewReaderSize(stdout, 256<<10), hashes, fn)
	cancel() // stops the writer and the process when reading ended early
	_ = cmd.Wait()
	if werr := <-writeErr; readErr == nil && werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		readErr = werr
	}
	if readErr != nil {
		if s := stderr.String(); s != "" {
			return fmt.Errorf("gitrepo: git cat-file --batch: %w (stderr: %s)", readErr, truncate(strings.TrimSpace(s), 200))
		}
		return fmt.Errorf("gitrepo: git cat-file --batch: %w", readErr)
	}
	return nil
}

// writeRequests writes one request per hash to cat-file's stdin, then
// closes it.
func writeRequests(stdin io.WriteCloser, hashes []Hash) error {
	w := bufio.NewWriterSize(stdin, 64<<10)
	var err error
	for _, h := range hashes {
		if _, err = w.WriteString(h.String() + "\n"); err != nil {
			break
		}
	}
	if err == nil {
		err = w.Flush()
	}
	stdin.Close()
	return err
}

// readCommitStream reads cat-file --batch's answers for hashes, in order,
// and hands each commit to fn.
func readCommitStream(rd *bufio.Reader, hashes []Hash, fn func(*Commit) error) error {
	c := &catFile{stdout: rd}
	for _, h := range hashes {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		info, err := parseBatchHeader(line, h)
		if err != nil {
			return err
		}
		if info.missing {
			return fmt.Errorf("commit %s: %w", h, ErrNotFound)
		}
		if info.typ != "commit" || info.size > maxCommitSize {
			return fmt.Errorf("object %s is a %s of %d bytes, not a commit of at most %d", h, info.typ, info.size, maxCommitSize)
		}
		data := make([]byte, info.size+1)
		if _, err := io.ReadFull(rd, data); err != nil {
			return err
		}
		if data[info.size] != '\n' {
			return fmt.Errorf("object %s not terminated by newline", h)
		}
		commit, err := ParseCommit(data[:info.size:info.size])
		if err != nil {
			return fmt.Errorf("commit %s: %w", h, err)
		}
		commit.Hash = h
		if err := fn(commit); err != nil {
			return err
		}
	}
	return nil
}

// NewCommits returns the commits reachable from tip and not from base
// (zero: all of tip's history), newest first, at most max of them (one
// "git rev-list" process): a caller asking for max+1 learns that there are
// more than max.
func (r *Repo) NewCommits(tip, base Hash, max int) ([]Hash, error) {
	args := []string{"rev-list", "--max-count=" + strconv.Itoa(max), tip.String()}
	if !base.IsZero() {
		args = append(args, "^"+base.String())
	}
	out, err := r.Run(context.Background(), nil, append(args, "--")...)
	if err != nil {
		return nil, fmt.Errorf("gitrepo: list %s since %s: %w", tip, base, err)
	}
	var hashes []Hash
	for _, l := range strings.Fields(string(out)) {
		h, err := ParseHash(l)
		if err != nil {
			return nil, fmt.Errorf("gitrepo: list %s since %s: %w", tip, base, err)
		}
		hashes = append(hashes, h)
	}
	return hashes, nil
}
