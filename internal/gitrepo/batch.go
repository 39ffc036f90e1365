package gitrepo

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync"
)

const (
	// maxHeaderLine bounds a cat-file response header line.
	maxHeaderLine = 256
	// maxSkip is the largest oversized object that is skipped in the
	// stream; larger ones cause the process to be restarted instead.
	maxSkip = 64 << 20
)

// catFile is one long-lived "git cat-file --batch[-check]" process,
// started lazily and restarted after any protocol or I/O error.
type catFile struct {
	repo *Repo
	mode string

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *limitedBuffer
	wbuf   []byte
}

// objInfo is a parsed response header.
type objInfo struct {
	missing bool
	typ     string
	size    int64
}

func (c *catFile) start() error {
	cmd := exec.Command("git", "cat-file", c.mode)
	cmd.Dir = c.repo.dir
	cmd.Env = c.repo.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		stdin.Close()
		return err
	}
	c.stderr = &limitedBuffer{max: 4096}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	c.cmd, c.stdin, c.stdout = cmd, stdin, bufio.NewReaderSize(stdout, 64<<10)
	return nil
}

// stop kills the process (if any); the next request restarts it.
func (c *catFile) stop() error {
	if c.cmd == nil {
		return nil
	}
	c.stdin.Close()
	err := c.cmd.Wait()
	c.cmd, c.stdin, c.stdout = nil, nil, nil
	return err
}

func (c *catFile) kill() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Kill()
	c.stdin.Close()
	_ = c.cmd.Wait()
	c.cmd, c.stdin, c.stdout = nil, nil, nil
}

func (c *catFile) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.stop(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			return wrapf(err, "stop cat-file %s", c.mode)
		}
	}
	return nil
}

// request sends h and parses the response header. The caller holds c.mu
// and must consume the body (for --batch) before the next request.
func (c *catFile) request(h Hash) (objInfo, error) {
	if c.repo.isClosed() {
		return objInfo{}, errClosed
	}
	fresh := false
	if c.cmd == nil {
		if err := c.start(); err != nil {
			return objInfo{}, fmt.Errorf("start git cat-file %s: %w", c.mode, err)
		}
		fresh = true
	}
	c.wbuf = append(c.wbuf[:0], h.String()...)
	c.wbuf = append(c.wbuf, '\n')
	_, err := c.stdin.Write(c.wbuf)
	var line []byte
	if err == nil {
		line, err = c.readLine()
	}
	if err != nil && !fresh {
		// The process died between requests (killed, crashed): restart
		// it once and retry; reads are idempotent.
		c.kill()
		return c.request(h)
	}
	if err != nil {
		return objInfo{}, c.fail(err)
	}
	info, err := parseBatchHeader(line, h)
	if err != nil {
		return objInfo{}, c.fail(err)
	}
	return info, nil
}

// fail kills the process after a protocol error and decorates err with
// the process's stderr.
func (c *catFile) fail(err error) error {
	c.kill()
	if s := c.stderr.String(); s != "" {
		return fmt.Errorf("git cat-file %s: %w (stderr: %s)", c.mode, err, truncate(string(bytes.TrimSpace([]byte(s))), 200))
	}
	return fmt.Errorf("git cat-file %s: %w", c.mode, err)
}

// readHeader reads the header cat-file answers for h (a pipelined
// reader's: its requests are written ahead).
func (c *catFile) readHeader(h Hash) (objInfo, error) {
	line, err := c.readLine()
	if err != nil {
		return objInfo{}, err
	}
	return parseBatchHeader(line, h)
}

func (c *catFile) readLine() ([]byte, error) {
	var line []byte
	for {
		frag, err := c.stdout.ReadSlice('\n')
		line = append(line, frag...)
		if len(line) > maxHeaderLine {
			return nil, fmt.Errorf("response header too long")
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// parseBatchHeader parses "<hash> <type> <size>" or "<hash> missing".
func parseBatchHeader(line []byte, want Hash) (objInfo, error) {
	f := bytes.Split(line, []byte{' '})
	if len(f) < 2 {
		return objInfo{}, fmt.Errorf("malformed response %q", line)
	}
	if len(f) == 2 && string(f[1]) == "missing" {
		if string(f[0]) != want.String() {
			return objInfo{}, fmt.Errorf("response for %q, want %s", f[0], want)
		}
		return objInfo{missing: true}, nil
	}
	if len(f) != 3 {
		return objInfo{}, fmt.Errorf("malformed response %q", line)
	}
	got, err := parseHashBytes(f[0])
	if err != nil || got != want {
		return objInfo{}, fmt.Errorf("response for %q, want %s", f[0], want)
	}
	typ := string(f[1])
	switch typ {
	case "blob", "tree", "commit", "tag":
	default:
		return objInfo{}, fmt.Errorf("unknown object type %q", typ)
	}
	size, err := strconv.ParseInt(string(f[2]), 10, 64)
	if err != nil || size < 0 || (len(f[2]) > 1 && f[2][0] == '0') {
		return objInfo{}, fmt.Errorf("bad object size %q", f[2])
	}
	return objInfo{typ: typ, size: size}, nil
}

// info returns the type and size of h using --batch-check.
func (c *catFile) info(h Hash) (objInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.request(h)
}

// read returns the object h using --batch. Oversized objects are skipped
// (or the process restarted) so the stream stays in sync.
func (c *catFile) read(h Hash, maxSize int64) (objInfo, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	info, err := c.request(h)
	if err != nil || info.missing {
		return info, nil, err
	}
	if info.size > maxSize {
		if info.size+1 > maxSkip {
			c.kill()
		} else if _, err := io.CopyN(io.Discard, c.stdout, info.size+1); err != nil {
			return info, nil, c.fail(err)
		}
		return info, nil, ErrTooLarge
	}
	data := make([]byte, info.size+1)
	if _, err := io.ReadFull(c.stdout, data); err != nil {
		return info, nil, c.fail(err)
	}
	if data[info.size] != '\n' {
		return info, nil, c.fail(fmt.Errorf("object %s not terminated by newline", h))
	}
	return info, data[:info.size:info.size], nil
}
