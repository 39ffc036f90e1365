// Package rest makes the few GET requests of the forge clients
// (internal/forge/github, internal/forge/gitlab) with net/http: a JSON
// answer decoded into the caller's type, anything but a 200 answer
// returned as an *Error (a GET of the forges' APIs answers 200; GitHub's
// 202 means "still computing", no answer yet). It trusts nothing the server sends: an answer is
// bounded in size, and its meaning is the caller's to check. It holds no
// state and is safe for concurrent use.
//
// The forges' own client libraries (go-github, GitLab's client-go) are not
// used: every git-secure process, hooks and the remote helper included,
// runs the package initialisation of everything linked into the one
// binary, and theirs (client-go registers its route table of about a
// thousand API templates at start) was paid by every push for four GET
// requests that only `git secure forge` makes.
package rest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxBody bounds the bytes of one answer: a listing page of 100 pull
// requests is about 2 MB.
const MaxBody = 32 << 20

// Error is an answer other than 200. Message is the "message" (else "error") of
// its JSON body when it has one, as text.
type Error struct {
	StatusCode int
	Status     string // "404 Not Found"
	Header     http.Header
	Message    string
	DocURL     string // GitHub's documentation_url
}

// Error returns the status and, when the body had one, its message.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Status
	}
	return e.Status + ": " + e.Message
}

// Get sends GET url with header and decodes a 200 JSON answer into out.
// It returns the answer's header (pagination) with a nil error, or an
// *Error for another status, or an error naming what failed (the request,
// reading, an answer over MaxBody, JSON that does not decode into out).
func Get(ctx context.Context, hc *http.Client, url string, header http.Header, out any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := sameHost(hc).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if err != nil {
		return nil, fmt.Errorf("read the answer: %w", err)
	}
	if len(body) > MaxBody {
		return nil, fmt.Errorf("the answer is larger than %d bytes", MaxBody)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return nil, fmt.Errorf("decode the answer: %w", err)
	}
	return resp.Header, nil
}

// sameHost is hc refusing to follow a redirect to another scheme or
// host: net/http would carry every header but Authorization and Cookie
// there, GitLab's PRIVATE-TOKEN among them.
func sameHost(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if first := via[0].URL; req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return fmt.Errorf("the API redirected to %s://%s, another host: not followed", req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// statusError describes an answer other than 200; a body that is not a JSON
// object leaves Message empty.
func statusError(resp *http.Response, body []byte) *Error {
	e := &Error{StatusCode: resp.StatusCode, Status: resp.Status, Header: resp.Header}
	var b struct {
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
		DocURL  string          `json:"documentation_url"`
	}
	if json.Unmarshal(body, &b) != nil {
		return e
	}
	e.DocURL = b.DocURL
	e.Message = text(b.Message)
	if e.Message == "" {
		e.Message = text(b.Error)
	}
	return e
}

// text is a JSON string's value, or another JSON value as it was sent
// (GitLab answers some refusals with an object of field errors).
func text(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}
