package loadgen_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/loadgen"
)

// What each HTTP client sends and how the driver reads the answers, against
// a server that records the requests and answers as the test says.
func TestHTTPClientsSendAndRead(t *testing.T) {
	t.Parallel()
	type request struct{ method, path, body, contentType, txID, txOrigin string }
	for _, c := range httpClients {
		t.Run(c, func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen []request
			)
			answers := map[string]struct {
				status int
				body   string
			}{
				"/v1/databases/bench/transactions/begin":                     {200, `{"tx_ctx":{"id":"tx1","origin":"o1"}}`},
				"/v1/databases/bench/collections/usertable/documents/read":   {200, "{\"result\":{\"data\":{\"id\":1}}}\n"},
				"/v1/databases/bench/collections/usertable/documents/update": {409, `{"error":{"code":"ABORTED","message":"conflict"}}`},
				"/v1/databases/bench/transactions/commit":                    {400, `not the API's error`},
			}
			url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				seen = append(seen, request{r.Method, r.URL.Path, string(b), r.Header.Get("Content-Type"), r.Header.Get("Tigris-Tx-Id"), r.Header.Get("Tigris-Tx-Origin")})
				mu.Unlock()
				a, ok := answers[r.URL.Path]
				if !ok {
					a.status, a.body = 404, `{"error":{"code":"NOT_FOUND","message":"no"}}`
				}
				w.WriteHeader(a.status)
				// Written in two pieces and flushed between, so that a
				// 200 answer arrives chunked, as Folio's reads do.
				half := len(a.body) / 2
				io.WriteString(w, a.body[:half])
				w.(http.Flusher).Flush()
				io.WriteString(w, a.body[half:])
			}))
			d := newFolio(t, loadgen.FolioOptions{URL: url, Clients: 2, HTTPClient: c})
			ctx := context.Background()

			tx, err := d.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Read(ctx, 1); err != nil {
				t.Fatalf("read in a transaction: %v", err)
			}
			err = tx.Update(ctx, 1, "field0", "x")
			var apiErr *loadgen.APIError
			if !errors.Is(err, loadgen.ErrAborted) || !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Message != "conflict" {
				t.Errorf("update answered ABORTED: got %v, want an aborted APIError of 409", err)
			}
			err = tx.Commit(ctx)
			if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "" || apiErr.Message != "not the API's error" {
				t.Errorf("commit answered 400 with a plain body: got %v", err)
			}
			if n, err := d.Scan(ctx, 0, 10); err != nil || n != 1 {
				t.Errorf("scan: %d documents, %v; want 1", n, err)
			}
			if err := d.Insert(ctx, loadgen.Document{ID: 7, JSON: loadgen.Dataset{Docs: 8, Seed: 1}.Document(7)}); !errors.As(err, &apiErr) || apiErr.Code != "NOT_FOUND" {
				t.Errorf("insert answered 404: got %v", err)
			}
			canceled, cancel := context.WithCancel(ctx)
			cancel()
			if err := d.Read(canceled, 1); err == nil {
				t.Errorf("a read with a canceled context succeeded")
			}

			mu.Lock()
			defer mu.Unlock()
			want := []request{
				{"POST", "/v1/databases/bench/transactions/begin", "", "application/json", "", ""},
				{"POST", "/v1/databases/bench/collections/usertable/documents/read", `{"filter":{"id":1}}`, "application/json", "tx1", "o1"},
				{"PUT", "/v1/databases/bench/collections/usertable/documents/update", `{"filter":{"id":1},"fields":{"$set":{"field0":"x"}}}`, "application/json", "tx1", "o1"},
				{"POST", "/v1/databases/bench/transactions/commit", "", "application/json", "tx1", "o1"},
				{"POST", "/v1/databases/bench/collections/usertable/documents/read", `{"filter":{"id":{"$gte":0}},"options":{"limit":10}}`, "application/json", "", ""},
			}
			if len(seen) != len(want)+1 {
				t.Fatalf("server saw %d requests, want %d: %v", len(seen), len(want)+1, seen)
			}
			for i, w := range want {
				if seen[i] != w {
					t.Errorf("request %d:\n got %+v\nwant %+v", i, seen[i], w)
				}
			}
			if ins := seen[len(want)]; ins.method != "POST" || !strings.HasPrefix(ins.body, `{"documents":[{`) {
				t.Errorf("insert sent %s %s", ins.method, ins.body)
			}
		})
	}
}

func TestUnknownHTTPClient(t *testing.T) {
	if _, err := loadgen.NewFolio(loadgen.FolioOptions{URL: "http://127.0.0.1:1", HTTPClient: "curl"}); err == nil {
		t.Fatal("an unknown HTTP client was accepted")
	}
}

// A request whose context has a deadline ends by it, on either client,
// against a server that never answers.
func TestHTTPClientsKeepTheDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	url := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release) })
	for _, c := range httpClients {
		t.Run(c, func(t *testing.T) {
			d := newFolio(t, loadgen.FolioOptions{URL: url, Clients: 1, HTTPClient: c})
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- d.Read(ctx, 1) }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a read the server never answered succeeded")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the read outlived its 200ms deadline by 5s")
			}
		})
	}
}
