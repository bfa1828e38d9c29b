package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/kvtest"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/node"
)

// snapshotAtCheckpoint is the source's store, which keeps, with each
// checkpoint, a transaction reading the store as the checkpoint holds it:
// what a restored copy must equal.
type snapshotAtCheckpoint struct {
	*pebblekv.Store
	mu   sync.Mutex
	pos  kv.Position
	snap kv.Tx
}

func (s *snapshotAtCheckpoint) Checkpoint(ctx context.Context, dir string) (kv.Position, error) {
	pos, tx, err := s.Store.CheckpointWithSnapshot(ctx, dir)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.snap != nil {
		s.snap.Rollback()
	}
	s.pos, s.snap = pos, tx
	return pos, nil
}

// call makes one JSON call of a server and returns its status and body.
func call(t testing.TB, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func mustCall(t testing.TB, method, url, body string) []byte {
	t.Helper()
	code, b := call(t, method, url, body)
	if code != http.StatusOK {
		t.Fatalf("%s %s %s: %d %s", method, url, body, code, b)
	}
	return b
}

const itemsSchema = `{"schema":{"title":"items","properties":{"id":{"type":"integer"},"name":{"type":"string"},"n":{"type":"integer"},
	"tags":{"type":"array","items":{"type":"string"}},"nested":{"type":"object","properties":{"x":{"type":"number"},"when":{"type":"string","format":"date-time"}}}},"primary_key":["id"]}}`

func itemDoc(id, i int) string {
	return fmt.Sprintf(`{"id":%d,"name":"item %d of writer %d","n":%d,"tags":["t%d","all"],"nested":{"x":%g,"when":"2026-11-25T10:%02d:00Z"}}`, id, i, id/1_000_000, i, i%5, float64(i)/4, i%60)
}

// A backup taken through `folio backup --url` while writers insert, update
// and delete, restored with `folio restore`, holds exactly the source's
// keys (documents, index entries, counters, catalog) at the backup's
// position and its log records up to it; a server started on it rebuilds
// its search index and finds every document.
func TestBackupUnderWritesAndRestore(t *testing.T) {
	ctx := context.Background()
	src, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	store := &snapshotAtCheckpoint{Store: src}
	backups := t.TempDir()
	n, err := node.Start(ctx, node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = "127.0.0.1:0"
		nc.ShutdownTimeout = 5 * time.Second
		nc.Ops.BackupDir = backups
	}))
	if err != nil {
		src.Close()
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.Addr().String()
	coll := base + "/v1/databases/shop/collections/items"
	mustCall(t, "POST", base+"/v1/databases/shop/create", "")
	mustCall(t, "POST", coll+"/createOrUpdate", itemsSchema)

	stop := make(chan struct{})
	var writes atomic.Int64
	var wg sync.WaitGroup
	for w := 1; w <= 3; w++ {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := w*1_000_000 + i
				reqs := [][3]string{{"POST", "/documents/insert", `{"documents":[` + itemDoc(id, i) + `]}`}}
				if i%3 == 2 {
					reqs = append(reqs, [3]string{"PUT", "/documents/update", fmt.Sprintf(`{"filter":{"id":%d},"fields":{"$set":{"n":%d,"name":"updated %d"}}}`, id-1, -i, i)})
				}
				if i%5 == 4 {
					reqs = append(reqs, [3]string{"DELETE", "/documents/delete", fmt.Sprintf(`{"filter":{"id":%d}}`, id-3)})
				}
				for _, r := range reqs {
					if code, b := call(t, r[0], coll+r[1], r[2]); code != http.StatusOK {
						t.Errorf("%s %s: %d %s", r[0], r[1], code, b)
						return
					}
					writes.Add(1)
				}
			}
		})
	}
	waitWrites := func(n int64) {
		for deadline := time.Now().Add(time.Minute); writes.Load() < n; time.Sleep(5 * time.Millisecond) {
			if t.Failed() || time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("only %d writes", writes.Load())
			}
		}
	}
	waitWrites(300)
	target := filepath.Join(backups, "backup")
	var out bytes.Buffer
	if err := execute([]string{"backup", "--url", base, "--to", "backup", "--json"}, &out); err != nil {
		t.Fatalf("folio backup: %v", err)
	}
	var res struct {
		Position kv.Position `json:"position"`
		Bytes    int64       `json:"bytes"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("folio backup printed %q: %v", out.String(), err)
	}
	waitWrites(writes.Load() + 300) // the writes go on after the backup
	close(stop)
	wg.Wait()

	store.mu.Lock()
	pos, snap := store.pos, store.snap
	store.mu.Unlock()
	defer snap.Rollback()
	if res.Position != pos {
		t.Fatalf("folio backup reports position %d, the checkpoint was cut at %d", res.Position, pos)
	}
	last, _ := src.LastPosition(ctx)
	t.Logf("backup at position %d (%d bytes); the source went on to %d", pos, res.Bytes, last)
	if last <= pos {
		t.Fatal("no commit after the backup: the test proves nothing")
	}
	want, err := kvtest.ReadContents(ctx, snap, src, pos)
	if err != nil {
		t.Fatal(err)
	}

	restored := filepath.Join(t.TempDir(), "restored")
	out.Reset()
	if err := execute([]string{"restore", "--from", target, "--data-dir", restored}, &out); err != nil {
		t.Fatalf("folio restore: %v", err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("position %d", pos)) {
		t.Errorf("folio restore printed %q", out.String())
	}
	cp, err := pebblekv.Open(pebblekv.Options{Dir: restored})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := cp.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := kvtest.ReadContents(ctx, tx, cp, pos)
	tx.Rollback()
	if err != nil {
		t.Fatal(err)
	}
	after, _, _ := cp.ReadLog(ctx, pos, 0)
	cp.Close()
	t.Logf("the source held %d keys and %d log entries at the backup's position", len(want.Keys), len(want.Log))
	kvtest.CompareContents(t, want, got)
	if len(after) != 0 {
		t.Errorf("the restored store has %d log entries after the backup's position", len(after))
	}

	// A server on the restored directory: its search index is rebuilt
	// (it was not backed up) and holds every document.
	rn, err := node.Start(ctx, node.DefaultConfigWith(func(nc *node.Config) {
		nc.Engine = "pebble"
		nc.DataDir = restored
		nc.Addr = "127.0.0.1:0"
		nc.ShutdownTimeout = 5 * time.Second
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer rn.Close()
	rcoll := "http://" + rn.Addr().String() + "/v1/databases/shop/collections/items"
	docs := lines(mustCall(t, "POST", rcoll+"/documents/read", `{"filter":{}}`))
	var found int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, b := call(t, "POST", rcoll+"/documents/search", `{"q":"item","page":1,"page_size":1}`)
		if code == http.StatusOK {
			var page struct {
				Result struct {
					Meta struct {
						Found int `json:"found"`
					} `json:"meta"`
				} `json:"result"`
			}
			if err := json.Unmarshal(b, &page); err != nil {
				t.Fatalf("search: %s", b)
			}
			found = page.Result.Meta.Found
			break
		}
		if code != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("search on the restored server: %d %s", code, b)
		}
	}
	// Updated documents are named "updated ...": the search counts those
	// still named "item".
	named := lines(mustCall(t, "POST", rcoll+"/documents/read", `{"filter":{"name":{"$gt":"item","$lt":"item~"}}}`))
	t.Logf("the restored server holds %d documents, %d named item; search found %d", docs, named, found)
	if found != named || named < 100 {
		t.Fatalf("search after restore found %d documents, want %d", found, named)
	}
}

// lines counts the lines of a stream's body.
func lines(b []byte) int {
	n := 0
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			n++
		}
	}
	return n
}

// folio backup --data-dir copies a store no server has open, and refuses
// one that a server holds; folio restore refuses a directory that holds
// anything, and a directory that is not a whole backup, leaving both as
// they were.
func TestBackupDirectlyAndRestoreRefusals(t *testing.T) {
	ctx := context.Background()
	dataDir := t.TempDir()
	s, err := pebblekv.Open(pebblekv.Options{Dir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := kv.Run(ctx, s, func(tx kv.Tx) error {
			if err := tx.Set(fmt.Appendf(nil, "k%03d", i), []byte("v")); err != nil {
				return err
			}
			return tx.AppendLog([]byte("r"))
		}); err != nil {
			t.Fatal(err)
		}
	}
	target := filepath.Join(t.TempDir(), "b")
	err = execute([]string{"backup", "--data-dir", dataDir, "--to", target}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "lock") || !strings.Contains(err.Error(), "--url") {
		t.Fatalf("backup --data-dir of a store in use: %v, want it refused with advice to use --url", err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("the refused backup left %s behind (%v)", target, err)
	}
	s.Close()
	var out bytes.Buffer
	if err := execute([]string{"backup", "--data-dir", dataDir, "--to", target}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "at position 100") {
		t.Errorf("folio backup printed %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dataDir, "backup-staging")); !os.IsNotExist(err) {
		t.Errorf("the staging directory is left in the data directory (%v)", err)
	}

	// Into a directory that holds a file: refused, the file untouched.
	busy := t.TempDir()
	keep := filepath.Join(busy, "keep.txt")
	os.WriteFile(keep, []byte("mine"), 0o600)
	err = execute([]string{"restore", "--from", target, "--data-dir", busy}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a non-empty directory: %v, want it refused", err)
	}
	if entries, _ := os.ReadDir(busy); len(entries) != 1 {
		t.Fatalf("the refused restore changed the directory: %v", entries)
	}
	// A backup into a non-empty directory is refused the same way.
	if err := execute([]string{"backup", "--data-dir", dataDir, "--to", busy}, io.Discard); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("backup into a non-empty directory: %v, want it refused", err)
	}
	// A directory without a manifest is no backup.
	err = execute([]string{"restore", "--from", dataDir, "--data-dir", filepath.Join(t.TempDir(), "x")}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not a Folio backup") {
		t.Fatalf("restore from a data directory: %v, want it refused as not a backup", err)
	}
	// A backup with a file cut short is refused before anything is copied.
	damaged := filepath.Join(t.TempDir(), "damaged")
	if err := execute([]string{"backup", "--data-dir", dataDir, "--to", damaged}, io.Discard); err != nil {
		t.Fatal(err)
	}
	m, err := os.ReadFile(filepath.Join(damaged, "FOLIO_BACKUP.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Files []struct{ Name string } `json:"files"`
	}
	json.Unmarshal(m, &manifest)
	if len(manifest.Files) == 0 {
		t.Fatalf("a manifest without files: %s", m)
	}
	if err := os.Truncate(filepath.Join(damaged, manifest.Files[len(manifest.Files)-1].Name), 1); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	if err := execute([]string{"restore", "--from", damaged, "--data-dir", fresh}, io.Discard); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("restore of a damaged backup: %v, want it refused", err)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Fatalf("the refused restore made %s (%v)", fresh, err)
	}
	// The whole one restores into an empty directory that exists.
	empty := t.TempDir()
	if err := execute([]string{"restore", "--from", target, "--data-dir", empty}, io.Discard); err != nil {
		t.Fatal(err)
	}
	r, err := pebblekv.Open(pebblekv.Options{Dir: empty})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if pos, _ := r.LastPosition(ctx); pos != 100 {
		t.Fatalf("the restored store is at %d, want 100", pos)
	}
}
