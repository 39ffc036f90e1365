package rest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test") != "yes" {
			http.Error(w, "header not sent", http.StatusTeapot)
			return
		}
		w.Header().Set("X-Next", "2")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(t *testing.T, status int, body string, out any) (http.Header, error) {
	t.Helper()
	return Get(context.Background(), http.DefaultClient, serve(t, status, body), http.Header{"X-Test": {"yes"}}, out)
}

func TestGetDecodes(t *testing.T) {
	var out struct{ N int }
	h, err := get(t, http.StatusOK, `{"N":7}`, &out)
	if err != nil || out.N != 7 || h.Get("X-Next") != "2" {
		t.Fatalf("got %+v, header %v, %v", out, h, err)
	}
}

func TestGetErrors(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
		code       int
	}{
		{"message", `{"message":"Bad credentials","documentation_url":"https://docs"}`, http.StatusUnauthorized, "401 Unauthorized: Bad credentials", 401},
		{"error key", `{"error":"invalid_token"}`, http.StatusUnauthorized, "401 Unauthorized: invalid_token", 401},
		{"object message", `{"message":{"base":["not mergeable"]}}`, http.StatusBadRequest, `400 Bad Request: {"base":["not mergeable"]}`, 400},
		{"not json", `<html>`, http.StatusBadGateway, "502 Bad Gateway", 502},
		{"200 not json", `<html>`, http.StatusOK, "decode the answer: invalid character '<'", 0},
		{"202 still computing", `{}`, http.StatusAccepted, "202 Accepted", 202},
		{"too large", `"` + strings.Repeat("a", MaxBody) + `"`, http.StatusOK, "the answer is larger than 33554432 bytes", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out any
			_, err := get(t, tc.status, tc.body, &out)
			if err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			var e *Error
			if got := errors.As(err, &e); got != (tc.code != 0) || (got && e.StatusCode != tc.code) {
				t.Fatalf("error %#v: status %d wanted", err, tc.code)
			}
		})
	}
}

// A redirect to another host is not followed: the token headers would go
// with it.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	leaked := false
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked = r.Header.Get("Private-Token") != ""
		w.Write([]byte(`{"N":1}`))
	}))
	t.Cleanup(other.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/here", http.StatusFound)
			return
		}
		if r.URL.Path == "/here" {
			w.Write([]byte(`{"N":2}`))
			return
		}
		http.Redirect(w, r, other.URL+"/x", http.StatusFound)
	}))
	t.Cleanup(api.Close)
	h := http.Header{"Private-Token": {"t0ken"}}
	var out struct{ N int }
	_, err := Get(context.Background(), http.DefaultClient, api.URL+"/away", h, &out)
	if err == nil || !strings.Contains(err.Error(), "another host: not followed") || leaked {
		t.Fatalf("redirect to another host: %v (token sent there: %v)", err, leaked)
	}
	// On the same host a redirect is followed.
	if _, err := Get(context.Background(), http.DefaultClient, api.URL+"/moved", h, &out); err != nil || out.N != 2 {
		t.Fatalf("redirect on the same host: %+v, %v", out, err)
	}
}
