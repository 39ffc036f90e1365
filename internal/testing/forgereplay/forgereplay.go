// Package forgereplay serves recorded answers of a forge's REST API
// (GitHub, GitLab) to the tests of its client: each request path is
// answered with a status, headers and a body (a file of the test's
// testdata or a text), a missing or wrong token with the forge's own 401,
// anything not recorded with its own 404. It is for tests only.
package forgereplay

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Answer is one recorded answer. Status 0 is 200; "{URL}" in a header
// value (GitHub's Link) becomes the test server's URL.
type Answer struct {
	Status int
	Header map[string]string
	File   string // under testdata/
	Body   string
}

// Replay maps a request's escaped path and query to its answer.
type Replay map[string]Answer

// Forge is how a forge takes the token and answers what it does not know.
type Forge struct {
	TokenHeader, Token string // the header the client sends the token in, with its value
	Unauthorized       string // the 401 body
	NotFound           string // the 404 body
	ContentType        string
}

// GitHub answers as api.github.com does; the token is t0ken.
func GitHub() Forge {
	return Forge{TokenHeader: "Authorization", Token: "Bearer t0ken", Unauthorized: `{"message":"Bad credentials"}`,
		NotFound: `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`, ContentType: "application/json; charset=utf-8"}
}

// GitLab answers as gitlab.com's API v4 does; the token is t0ken.
func GitLab() Forge {
	return Forge{TokenHeader: "PRIVATE-TOKEN", Token: "t0ken", Unauthorized: `{"message":"401 Unauthorized"}`,
		NotFound: `{"message":"404 Not found"}`, ContentType: "application/json"}
}

// Serve starts a server that answers rp as f would; it stops with the test.
func (f Forge) Serve(t *testing.T, rp Replay) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(f.TokenHeader) != f.Token {
			http.Error(w, f.Unauthorized, http.StatusUnauthorized)
			return
		}
		a, ok := rp[r.URL.RequestURI()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, f.NotFound)
			return
		}
		body := []byte(a.Body)
		if a.File != "" {
			var err error
			if body, err = os.ReadFile(filepath.Join("testdata", a.File)); err != nil {
				t.Error(err)
			}
		}
		for k, v := range a.Header {
			w.Header().Set(k, strings.ReplaceAll(v, "{URL}", "http://"+r.Host))
		}
		w.Header().Set("Content-Type", f.ContentType)
		if a.Status == 0 {
			a.Status = http.StatusOK
		}
		w.WriteHeader(a.Status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}
