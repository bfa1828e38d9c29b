package node_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// A store whose tables were damaged on disk is served without the process
// ending: every transport answers the reads that reach the damage, the
// search that must rebuild its index from them, the writes after it and
// health with DATA_LOSS, and the node still answers afterwards.
func TestDamagedTablesAnswerDataLoss(t *testing.T) {
	dir := t.TempDir()
	// Small memtables, so that the documents land in tables.
	store, err := pebblekv.Open(pebblekv.Options{Dir: dir, MemTableSize: 256 << 10})
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = "127.0.0.1:0"
	}))
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + n.Addr().String()
	post(t, base, "/v1/databases/shop/create", "")
	if code, body := post(t, base, "/v1/databases/shop/collections/users/createOrUpdate",
		`{"schema":{"title":"users","primary_key":["id"],"properties":{"id":{"type":"integer"},"bio":{"type":"string"}}}}`); code != 200 {
		t.Fatalf("create collection: %d %s", code, body)
	}
	for batch := 0; batch < 2000; batch += 200 {
		var docs []string
		for i := batch; i < batch+200; i++ {
			b := make([]byte, 300)
			rand.Read(b)
			docs = append(docs, fmt.Sprintf(`{"id":%d,"bio":"%s"}`, i, hex.EncodeToString(b)))
		}
		if code, body := post(t, base, "/v1/databases/shop/collections/users/documents/insert", `{"documents":[`+strings.Join(docs, ",")+`]}`); code != 200 {
			t.Fatalf("insert: %d %s", code, body)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// Damage the middle half of every table, 64 bytes every 4 KiB: the
	// documents, their index entries and their log records; the catalog's
	// few keys come first and stay whole.
	tables, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
	if len(tables) < 2 {
		t.Fatalf("tables %v: want the documents flushed into several", tables)
	}
	for _, path := range tables {
		damageMiddle(t, path)
	}

	logs := &logBuffer{}
	n, err = node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.DataDir = dir
		nc.Addr = "127.0.0.1:0"
		nc.Logger = slog.New(slog.NewTextHandler(logs, nil))
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base = "http://" + n.Addr().String()

	// HTTP: a read streams what it can, then ends with an error line.
	_, body := post(t, base, "/v1/databases/shop/collections/users/documents/read", `{"filter":{}}`)
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, `"code":"DATA_LOSS"`) {
		t.Errorf("HTTP read ended with %.300s, want a DATA_LOSS error line", last)
	}
	if code, body := post(t, base, "/v1/databases/shop/collections/users/documents/search", `{"q":"x"}`); code != 500 || !strings.Contains(body, `"code":"DATA_LOSS"`) {
		t.Errorf("HTTP search: %d %.300s, want 500 DATA_LOSS", code, body)
	}

	// gRPC: the read and search streams end with codes.DataLoss.
	conn, err := grpc.NewClient(n.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := api.NewTigrisClient(conn)
	// A deadline for each call: a read of a damaged block costs Pebble's
	// search for a flipped bit, and on a loaded machine the read and the
	// search may take most of one shared bound.
	callCtx := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	read, err := rpc.Read(callCtx(), &api.ReadRequest{Project: "shop", Collection: "users", Filter: []byte(`{}`)})
	if err == nil {
		for err == nil {
			_, err = read.Recv()
		}
	}
	if grpcstatus.Code(err) != codes.DataLoss {
		t.Errorf("gRPC read ended with %v, want DataLoss", err)
	}
	search, err := rpc.Search(callCtx(), &api.SearchRequest{Project: "shop", Collection: "users", Q: "x"})
	if err == nil {
		for err == nil {
			_, err = search.Recv()
		}
	}
	if grpcstatus.Code(err) != codes.DataLoss {
		t.Errorf("gRPC search ended with %v, want DataLoss", err)
	}

	// Writes after the damage was found, and health, say so too.
	if code, body := post(t, base, "/v1/databases/shop/collections/users/documents/insert", `{"documents":[{"id":99999}]}`); code != 500 || !strings.Contains(body, `"code":"DATA_LOSS"`) {
		t.Errorf("HTTP insert: %d %.300s, want 500 DATA_LOSS", code, body)
	}
	if _, err := rpc.Insert(callCtx(), &api.InsertRequest{Project: "shop", Collection: "users", Documents: [][]byte{[]byte(`{"id":99998}`)}}); grpcstatus.Code(err) != codes.DataLoss {
		t.Errorf("gRPC insert: %v, want DataLoss", err)
	}
	res, err := http.Get(base + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	health, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(health), `"code":"DATA_LOSS"`) {
		t.Errorf("health: %d %s, want DATA_LOSS", res.StatusCode, health)
	}
	// A scrape may pass its own timeout on a loaded machine (503 from the
	// handler): try a few, and say what the last one answered.
	var scrape []byte
	status := 0
	for range 3 {
		metrics, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		scrape, _ = io.ReadAll(metrics.Body)
		metrics.Body.Close()
		if status = metrics.StatusCode; status == http.StatusOK {
			break
		}
	}
	if !strings.Contains(string(scrape), "\nfolio_pebble_damaged_data 1\n") {
		t.Errorf("/metrics after the damage was found has no folio_pebble_damaged_data 1: %d %.500s", status, scrape)
	}
	// The node still serves what is whole, and the log names the files.
	if code, body := post(t, base, "/v1/databases/list", ""); code != 200 || !strings.Contains(body, `"shop"`) {
		t.Errorf("list databases after the damage: %d %s", code, body)
	}
	if !strings.Contains(strings.Join(logs.lines(), "\n"), ".sst") {
		t.Errorf("no log line names a damaged table:\n%s", strings.Join(logs.lines(), "\n"))
	}
}

// damageMiddle overwrites 64 bytes every 4 KiB across the middle half of
// the file at path.
func damageMiddle(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	junk := make([]byte, 64)
	for off := info.Size() / 4; off < info.Size()*3/4; off += 4 << 10 {
		rand.Read(junk)
		if _, err := f.WriteAt(junk, off); err != nil {
			t.Fatal(err)
		}
	}
}
