package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
)

// FirstParents returns tip and its first-parent ancestors, newest first, at
// most max of them (one "git rev-list" process). The listing is parsed as
// it arrives: a million entries cost their 20 bytes each, not git's 41
// bytes of hex and a string per line besides.
func (r *Repo) FirstParents(tip Hash, max int) ([]Hash, error) {
	hashes := make([]Hash, 0, min(max, 1<<20))
	err := r.FirstParentsFunc(tip, max, func(h Hash) error {
		hashes = append(hashes, h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return hashes, nil
}

// FirstParentsFunc is FirstParents handing each hash to fn as it is
// listed, instead of keeping the listing: a caller that stores it
// elsewhere holds no second copy. An error from fn stops the listing and
// is returned wrapped.
func (r *Repo) FirstParentsFunc(tip Hash, max int, fn func(Hash) error) error {
	if r.isClosed() {
		return errClosed
	}
	return r.firstParentsGit(tip, max, fn)
}

// FirstParentsInProcess is FirstParentsFunc with the chain followed by
// the in-process readers (fastpath FirstParent: a few bytes of the pack
// index and of each commit's start), git rev-list listing from the first
// commit they do not read (everything, with the readers off). git
// rev-list holds the pack's index mapped, and touches most of it over a
// long chain: 112 MiB at a million entries, the largest process of a
// verification. In-process, nothing of the size of the history is
// resident; per commit it costs more CPU than git's C (about 30 us
// against 17 us on a loaded 2-core machine), which is why a verification
// uses it only for long logs.
func (r *Repo) FirstParentsInProcess(tip Hash, max int, fn func(Hash) error) error {
	if r.isClosed() {
		return errClosed
	}
	if r.fast == nil {
		return r.firstParentsGit(tip, max, fn)
	}
	h := tip
	for n := 0; n < max; n++ {
		parent, has, ok := r.fast.FirstParent(h)
		if !ok {
			return r.firstParentsGit(h, max-n, fn)
		}
		if err := fn(h); err != nil {
			return wrapf(err, "list %s", tip)
		}
		if !has {
			return nil
		}
		h = parent
	}
	return nil
}

// firstParentsGit is FirstParentsFunc through git rev-list.
func (r *Repo) firstParentsGit(tip Hash, max int, fn func(Hash) error) error {
	args := []string{"rev-list", "--first-parent", "--max-count=" + strconv.Itoa(max), tip.String(), "--"}
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return wrapf(err, "list %s", tip)
	}
	stderr := &limitedBuffer{max: maxStderr}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return wrapf(err, "list %s", tip)
	}
	perr := eachHashLine(bufio.NewReaderSize(stdout, 64<<10), max, fn)
	if perr != nil {
		// Stop git before waiting: it may still be writing.
		_ = cmd.Process.Kill()
	}
	werr := cmd.Wait()
	if werr != nil && perr == nil {
		return fmt.Errorf("gitrepo: list %s: %w", tip, gitError(args, stderr, werr))
	}
	if perr != nil {
		return fmt.Errorf("gitrepo: list %s: %w", tip, perr)
	}
	return nil
}

// readHashLines reads lines of exactly 40 lowercase hex digits, at most
// max of them; an empty listing is an error, as is anything more.
func readHashLines(rd *bufio.Reader, max int) ([]Hash, error) {
	var hashes []Hash
	err := eachHashLine(rd, max, func(h Hash) error {
		hashes = append(hashes, h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return hashes, nil
}

// eachHashLine is readHashLines handing each hash to fn.
func eachHashLine(rd *bufio.Reader, max int, fn func(Hash) error) error {
	n := 0
	for {
		line, err := rd.ReadSlice('\n')
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return err
		}
		if n == max {
			return fmt.Errorf("more than %d commits listed", max)
		}
		h, herr := parseHashBytes(bytes.TrimSuffix(line, []byte{'\n'}))
		if herr != nil {
			return herr
		}
		if err := fn(h); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		_, err := ParseHash("")
		return err
	}
	return nil
}

// ReadCommitsPipelined reads the commits hashes in order through a
// dedicated "git cat-file --batch" whose requests are written ahead by a
// goroutine, so that reading thousands of objects costs no round trip per
// object. fn is called for each commit in order; an error from fn stops
// the reading.
func (r *Repo) ReadCommitsPipelined(hashes []Hash, fn func(*Commit) error) error {
	return r.ReadCommitsInto(hashes, nil, fn)
}

// ReadCommitsInto is ReadCommitsPipelined with the bytes of each commit
// (Raw and Signature) taken from alloc(n), which must return n bytes that
// nothing else uses while the commit is: a reader of a long chain hands
// them back once it is done with the commits, instead of allocating a
// kilobyte and more for every entry. A nil alloc allocates.
func (r *Repo) ReadCommitsInto(hashes []Hash, alloc func(n int) []byte, fn func(*Commit) error) error {
	return r.readCommitsGit(hashes, alloc, fn)
}

// ReadCommitsInProcess is ReadCommitsInto with the in-process readers
// reading what they can (each object checked against its name), and one
// cat-file the rest from the first commit they do not read: git cat-file
// too maps the pack's whole index (see FirstParentsInProcess).
func (r *Repo) ReadCommitsInProcess(hashes []Hash, alloc func(n int) []byte, fn func(*Commit) error) error {
	if r.isClosed() {
		return errClosed
	}
	for i, h := range hashes {
		typ, data, ok := r.fast.ReadObjectInto(h, maxCommitSize, alloc)
		if !ok {
			return r.readCommitsGit(hashes[i:], alloc, fn)
		}
		if typ != "commit" {
			return fmt.Errorf("gitrepo: read commits: object %s is a %s of %d bytes, not a commit of at most %d", h, typ, len(data), maxCommitSize)
		}
		commit, err := parseCommit(data, alloc)
		if err != nil {
			return wrapf(err, "read commits: commit %s", h)
		}
		commit.Hash = h
		if err := fn(commit); err != nil {
			return err // the caller's, with the caller's context
		}
	}
	return nil
}

// readCommitsGit is ReadCommitsInto through one git cat-file --batch.
func (r *Repo) readCommitsGit(hashes []Hash, alloc func(n int) []byte, fn func(*Commit) error) error {
	return r.catFilePipelined("--batch", hashes, 256<<10, func(rd *bufio.Reader) error {
		return readCommitStream(rd, hashes, alloc, fn)
	})
}

// catFilePipelined runs "git cat-file MODE" for hashes, its requests
// written ahead by a goroutine, and hands its output to read; the process
// stops when read returns, early or not.
func (r *Repo) catFilePipelined(mode string, hashes []Hash, bufSize int, read func(*bufio.Reader) error) error {
	if r.isClosed() {
		return errClosed
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "cat-file", mode)
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
		return wrapf(err, "start git cat-file")
	}
	writeErr := make(chan error, 1)
	go func() { writeErr <- writeRequests(stdin, hashes) }()
	readErr := read(bufio.NewReaderSize(stdout, bufSize))
	cancel() // stops the writer and the process when reading ended early
	_ = cmd.Wait()
	if werr := <-writeErr; readErr == nil && werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		readErr = werr
	}
	var fe fnError
	if errors.As(readErr, &fe) {
		return fe.err // the caller's, with the caller's context
	}
	if readErr != nil {
		if s := stderr.String(); s != "" {
			return fmt.Errorf("gitrepo: git cat-file %s: %w (stderr: %s)", mode, readErr, truncate(strings.TrimSpace(s), 200))
		}
		return fmt.Errorf("gitrepo: git cat-file %s: %w", mode, readErr)
	}
	return nil
}

// fnError carries an error of a reader's callback out through
// catFilePipelined, which returns it as it is: the callback's error has
// its caller's context, and "gitrepo: git cat-file --batch: " before it
// would blame git for it.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }
func (e fnError) Unwrap() error { return e.err }

// writeRequests writes one request per hash to cat-file's stdin, then
// closes it.
func writeRequests(stdin io.WriteCloser, hashes []Hash) error {
	w := bufio.NewWriterSize(stdin, 64<<10)
	var err error
	line := make([]byte, 0, 2*len(Hash{})+1)
	for _, h := range hashes {
		if _, err = w.Write(append(h.AppendHex(line[:0]), '\n')); err != nil {
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
// alloc (nil: make) gives each commit's bytes.
func readCommitStream(rd *bufio.Reader, hashes []Hash, alloc func(n int) []byte, fn func(*Commit) error) error {
	c := &catFile{stdout: rd}
	for _, h := range hashes {
		info, err := c.readHeader(h)
		if err != nil {
			return err
		}
		if info.missing {
			return fmt.Errorf("commit %s: %w", h, errObjectNotFound)
		}
		if info.typ != "commit" || info.size > maxCommitSize {
			return fmt.Errorf("object %s is a %s of %d bytes, not a commit of at most %d", h, info.typ, info.size, maxCommitSize)
		}
		var data []byte
		if alloc != nil {
			data = alloc(int(info.size) + 1)[: info.size+1 : info.size+1]
		} else {
			data = make([]byte, info.size+1)
		}
		if _, err := io.ReadFull(rd, data); err != nil {
			return err
		}
		if data[info.size] != '\n' {
			return fmt.Errorf("object %s not terminated by newline", h)
		}
		commit, err := parseCommit(data[:info.size:info.size], alloc)
		if err != nil {
			return &wrapped{ctx: "commit " + h.String(), err: err}
		}
		commit.Hash = h
		if err := fn(commit); err != nil {
			return fnError{err}
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
		return nil, wrapf(err, "list %s since %s", tip, base)
	}
	var hashes []Hash
	for _, l := range strings.Fields(string(out)) {
		h, err := ParseHash(l)
		if err != nil {
			return nil, wrapf(err, "list %s since %s", tip, base)
		}
		hashes = append(hashes, h)
	}
	return hashes, nil
}
