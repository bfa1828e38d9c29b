package node_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/kv/pebblekv/nospacefs"
	"github.com/foliodb/folio/internal/node"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// A server whose disk is full answers writes at once with 429
// RESOURCE_EXHAUSTED and a retry delay, and says so in /v1/health and in
// /metrics; reads still work; once space is freed writes work again without
// a restart; and a shutdown while the disk is full ends within its bound.
func TestDiskFull(t *testing.T) {
	disk := nospacefs.New(vfs.NewMem())
	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// Small memtables: a few inserts fill one, and Pebble's flush of it
	// is what meets the full disk.
	store, err := pebblekv.Open(pebblekv.Options{Dir: "/data", FS: disk, MemTableSize: 256 << 10, CacheSize: 8 << 20, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = "127.0.0.1:0"
		nc.Logger = logger
		nc.ShutdownTimeout = 5 * time.Second
	}))
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			disk.Full.Store(false)
			n.Close()
		}
	}()
	base := "http://" + n.Addr().String()
	post(t, base, "/v1/databases/db/create", "")
	if code, body := post(t, base, "/v1/databases/db/collections/items/createOrUpdate",
		`{"schema":{"title":"items","primary_key":["id"],"properties":{"id":{"type":"integer"},"text":{"type":"string"}}}}`); code != 200 {
		t.Fatalf("create collection: %d %s", code, body)
	}
	text := strings.Repeat("x", 16<<10)
	insert := func(id int) (int, string, time.Duration) {
		start := time.Now()
		code, body := post(t, base, "/v1/databases/db/collections/items/documents/insert", fmt.Sprintf(`{"documents":[{"id":%d,"text":%q}]}`, id, text))
		return code, body, time.Since(start)
	}
	if code, body, _ := insert(0); code != 200 {
		t.Fatalf("insert: %d %s", code, body)
	}

	disk.Full.Store(true)
	id := 1
	fillUntilRefused := func() {
		t.Helper()
		for ; ; id++ {
			code, body, took := insert(id)
			if took > 2*time.Second {
				t.Fatalf("insert %d on a full disk took %v (%d %s), want an answer at once", id, took, code, body)
			}
			if code == 200 {
				if id > 200 {
					t.Fatalf("200 inserts of 16 KiB on a full disk all succeeded")
				}
				continue
			}
			if code != http.StatusTooManyRequests || !strings.Contains(body, `"code":"RESOURCE_EXHAUSTED"`) || !strings.Contains(body, `"retry":{"delay":`) {
				t.Fatalf("insert %d on a full disk: %d %s, want 429 RESOURCE_EXHAUSTED with a retry delay", id, code, body)
			}
			return
		}
	}
	fillUntilRefused()
	if code, body := get(t, base+"/v1/health"); code != http.StatusTooManyRequests || !strings.Contains(body, "RESOURCE_EXHAUSTED") {
		t.Errorf("health on a full disk: %d %s", code, body)
	}
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, "\nfolio_pebble_disk_full 1\n") {
		t.Errorf("/metrics on a full disk has no folio_pebble_disk_full 1")
	}
	if code, body := post(t, base, "/v1/databases/db/collections/items/documents/read", `{"filter":{"id":0}}`); code != 200 || !strings.Contains(body, `"id":0`) {
		t.Errorf("a read on a full disk: %d %.200s", code, body)
	}
	if !logs.has("disk full: commits are refused until space is freed") {
		t.Error("the full disk was not logged")
	}
	// Pebble retries its failed flush at once, again and again: its error
	// is logged once every few seconds, not each time.
	time.Sleep(300 * time.Millisecond)
	if got := strings.Count(strings.Join(logs.lines(), "\n"), "background error"); got > 2 {
		t.Errorf("Pebble's background error logged %d times in 300 ms", got)
	}

	disk.Full.Store(false) // space freed
	waitFor(t, func() bool { code, _, _ := insert(id); return code == 200 })
	id++
	// Health answers from a probe up to a second old.
	waitFor(t, func() bool { code, _ := get(t, base+"/v1/health"); return code == 200 })
	if _, body := get(t, base+"/metrics"); !strings.Contains(body, "\nfolio_pebble_disk_full 0\n") {
		t.Errorf("/metrics once space is freed has no folio_pebble_disk_full 0")
	}

	// Full again, and a shutdown meanwhile (SIGTERM's path).
	disk.Full.Store(true)
	fillUntilRefused()
	done := make(chan struct{})
	go func() { n.Close(); close(done) }()
	closed = true
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the shutdown on a full disk did not end within 10 s (its bound is 5 s)")
	}
}
