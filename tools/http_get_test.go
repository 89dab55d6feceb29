package tools

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestHTTPGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write([]byte(strings.Repeat("x", 100<<10)))
		case "/away":
			http.Redirect(w, r, "http://example.invalid/", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("hello from " + r.URL.Path))
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	tool := HTTPGet([]string{u.Host}, nil)
	out, err := call(t, tool, `{"url":"`+srv.URL+`/page"}`)
	if err != nil || !strings.Contains(out, "200 OK") || !strings.Contains(out, "hello from /page") {
		t.Errorf("allowed host: %q, %v", out, err)
	}
	out, _ = call(t, tool, `{"url":"`+srv.URL+`/big"}`)
	if !strings.Contains(out, "[response cut at 64 KB]") || len(out) > 70<<10 {
		t.Errorf("big response not capped: %d bytes", len(out))
	}
	for args, want := range map[string]string{
		`{"url":"http://example.invalid/"}`:   "not an allowed host",
		`{"url":"file:///etc/passwd"}`:        "not an http(s) URL",
		`{"url":"` + srv.URL + `/away"}`:      "redirected to example.invalid",
		`{"url":"http://127.0.0.1:1/closed"}`: "not an allowed host",
	} {
		if _, err := call(t, tool, args); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", args, err, want)
		}
	}
}
