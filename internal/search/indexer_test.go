package search_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/filter"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/search"
	"github.com/foliodb/folio/tests/backendtest"
)

func TestMain(m *testing.M) { os.Exit(backendtest.Main(m)) }

// env is a store with a collection "coll" of documents {"id":n,"t":"..."}.
type env struct {
	store kv.Store
	clog  *changelog.Log
	cat   *catalog.Catalog
	docs  *documents.Service
	dir   string
	coll  *catalog.Collection
}

const testSchema = `{"title":"coll","properties":{"id":{"type":"integer"},"t":{"type":"string"}},"primary_key":["id"]}`

func newEnv(t testing.TB, b backendtest.Backend) *env {
	t.Helper()
	e := &env{store: b.Open(t), cat: catalog.New(), docs: documents.New(), dir: t.TempDir()}
	e.clog = changelog.NewLog(e.store, changelog.Options{})
	e.tx(t, func(tx kv.Tx) error {
		if err := e.cat.CreateDatabase(context.Background(), tx, ns, "db"); err != nil {
			return err
		}
		db, err := e.cat.Database(context.Background(), tx, ns, "db")
		if err != nil {
			return err
		}
		_, err = e.cat.CreateOrUpdateCollection(context.Background(), tx, db, "coll", []byte(testSchema), true)
		return err
	})
	e.tx(t, func(tx kv.Tx) (err error) {
		e.coll, err = e.cat.Lookup(context.Background(), tx, ns, "db", "coll")
		return err
	})
	return e
}

func (e *env) tx(t testing.TB, fn func(tx kv.Tx) error) {
	t.Helper()
	if _, err := kv.Run(context.Background(), e.store, fn); err != nil {
		t.Fatal(err)
	}
}

func (e *env) put(t testing.TB, id int, text string) {
	t.Helper()
	e.tx(t, func(tx kv.Tx) error {
		_, err := e.docs.Replace(context.Background(), tx, e.coll, [][]byte{[]byte(fmt.Sprintf(`{"id":%d,"t":%q}`, id, text))})
		return err
	})
}

func (e *env) del(t testing.TB, id int) {
	t.Helper()
	f, err := filter.Parse([]byte(fmt.Sprintf(`{"id":%d}`, id)), e.coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	e.tx(t, func(tx kv.Tx) error {
		_, err := e.docs.Delete(context.Background(), tx, e.coll, f, 0)
		return err
	})
}

func (e *env) start(t *testing.T) *search.Indexer {
	t.Helper()
	ix := search.New(e.clog, search.Options{Dir: e.dir, BatchEntries: 16, RebuildChunk: 100})
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// caughtUp waits until ix holds everything committed so far.
func (e *env) caughtUp(t *testing.T, ix *search.Indexer) {
	t.Helper()
	// The newest commit, not LastPosition: on PostgreSQL that stops below
	// any transaction open in the cluster (another test's), and the
	// writes just made may lie above it.
	last, err := e.store.LastPosition(context.Background())
	if settled, ok := e.store.(interface {
		SettledPosition(context.Context) (kv.Position, error)
	}); ok && err == nil {
		last, err = settled.SettledPosition(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := ix.WaitFor(ctx, e.coll.ID, last)
		cancel()
		if err == nil {
			return
		}
		// Behind after 5 s is only slow (a loaded machine, the race
		// detector); the deadline says what is too slow.
		if err != search.ErrRebuilding && err != search.ErrBehind && err != search.ErrBuilding || time.Now().After(deadline) {
			t.Fatalf("wait for position %d: %v", last, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stored is what the collection holds: storage key (hex) → document.
func (e *env) stored(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	e.tx(t, func(tx kv.Tx) error {
		clear(out)
		it := tx.Scan(context.Background(), keyspace.Documents(e.coll.ID), kv.ScanOptions{})
		defer it.Close()
		for it.Next() {
			r, err := documents.DecodeRecord(it.Value())
			if err != nil {
				return err
			}
			out[hex.EncodeToString(it.Key())] = string(r.Data)
		}
		return it.Err()
	})
	return out
}

// checkIndex checks that ix's index holds exactly the stored documents:
// the same keys, each found by its exact text and by its words.
func (e *env) checkIndex(t *testing.T, ix *search.Indexer) {
	t.Helper()
	want := e.stored(t)
	keys := e.search(t, ix, `{}`, "")
	var got []string
	for _, k := range keys {
		got = append(got, hex.EncodeToString(k))
	}
	var wantKeys []string
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	slices.Sort(got)
	slices.Sort(wantKeys)
	if !slices.Equal(got, wantKeys) {
		t.Fatalf("the index holds %d keys, the store %d; only in the index: %v; only in the store: %v", len(got), len(wantKeys), minus(got, wantKeys), minus(wantKeys, got))
	}
	for k, data := range want {
		var doc struct {
			ID int
			T  string
		}
		fmt.Sscanf(data, `{"id":%d,"t":%q}`, &doc.ID, &doc.T)
		hits := e.search(t, ix, fmt.Sprintf(`{"id":%d,"t":%q}`, doc.ID, doc.T), "")
		if len(hits) != 1 || hex.EncodeToString(hits[0]) != k {
			t.Errorf("document %s (%s): the index finds %d hits for its current text", k, data, len(hits))
		}
	}
}

// search returns the keys a filter and text find, at most 10,000.
func (e *env) search(t *testing.T, ix *search.Indexer, rawFilter, q string) [][]byte {
	t.Helper()
	f, err := filter.Parse([]byte(rawFilter), e.coll.Schema, filter.Collation{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := search.Prepare(e.coll.Schema, search.Request{Q: q, Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ix.Searcher(e.coll.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Page(context.Background(), p, 0, 10_000, false)
	if err != nil {
		t.Fatal(err)
	}
	return res.Keys
}

// TestBuiltAtFirstSearch: a collection that was never searched has no
// index (nothing on disk, its writes not indexed) across restarts; its
// first search builds one from the documents, which is then kept and fed
// from the log like any other, across restarts too.
func TestBuiltAtFirstSearch(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		ix := e.start(t)
		for i := range 30 {
			e.put(t, i, fmt.Sprintf("first %d", i))
		}
		dormant := func(ix *search.Indexer) {
			t.Helper()
			st := loadedStats(ix)
			if len(st.Indexes) != 1 || !st.Indexes[0].Dormant || st.Indexes[0].Ready || st.Indexes[0].Documents != 0 {
				t.Fatalf("never searched: %+v, want a dormant collection", st.Indexes)
			}
			if entries, err := os.ReadDir(e.dir); err != nil || len(entries) != 0 {
				t.Fatalf("never searched: the index directory holds %v (%v)", entries, err)
			}
		}
		dormant(ix)
		ix.Close()
		for i := 30; i < 40; i++ {
			e.put(t, i, fmt.Sprintf("first %d", i))
		}
		ix = e.start(t)
		dormant(ix)

		e.caughtUp(t, ix) // the first search's wait
		e.checkIndex(t, ix)
		st := ix.Stats(context.Background())
		if st.Indexes[0].Dormant || !st.Indexes[0].Ready || st.Indexes[0].Documents != 40 || st.Indexes[0].Rebuilds != 1 {
			t.Fatalf("after the first search: %+v", st.Indexes)
		}
		e.put(t, 40, "after the build")
		e.del(t, 0)
		e.caughtUp(t, ix)
		e.checkIndex(t, ix)

		ix.Close()
		e.put(t, 41, "while stopped")
		ix = e.start(t)
		st = loadedStats(ix)
		if st.Indexes[0].Dormant {
			t.Fatalf("a searched collection is dormant after a restart: %+v", st.Indexes)
		}
		e.caughtUp(t, ix)
		e.checkIndex(t, ix)
		if st := ix.Stats(context.Background()); st.Indexes[0].Rebuilds != 0 {
			t.Fatalf("a searched collection's index was rebuilt after a restart: %+v", st.Indexes)
		}
	})
}

// loadedStats is ix's stats once it has loaded the catalog, which it does
// in the background after Start.
func loadedStats(ix *search.Indexer) search.Stats {
	st := ix.Stats(context.Background())
	for deadline := time.Now().Add(10 * time.Second); len(st.Indexes) == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		st = ix.Stats(context.Background())
	}
	return st
}

// TestRestartReplaysFromWatermark: an indexer stopped while writes go on
// opens its index again, ready at once (no rebuild), and replays the log
// from its watermark.
func TestRestartReplaysFromWatermark(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		ix := e.start(t)
		for i := range 60 {
			e.put(t, i, fmt.Sprintf("first %d", i))
		}
		e.caughtUp(t, ix)
		e.checkIndex(t, ix)
		watermark := ix.Stats(context.Background()).Indexes[0].Applied
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}

		for i := 40; i < 80; i++ {
			e.put(t, i, fmt.Sprintf("second %d", i))
		}
		for i := 0; i < 10; i++ {
			e.del(t, i)
		}
		ix = e.start(t)
		e.caughtUp(t, ix)
		e.checkIndex(t, ix)
		// Opened at its watermark and caught up from the log, not rebuilt.
		st := ix.Stats(context.Background())
		if len(st.Indexes) != 1 || st.Indexes[0].Rebuilds != 0 || st.Indexes[0].Applied <= watermark {
			t.Fatalf("after the restart: %+v, want the index opened at its watermark %d, not rebuilt", st, watermark)
		}
		if st.LagPositions != 0 || st.LagSeconds != 0 || st.Indexes[0].Documents != 70 || st.Indexes[0].DiskBytes == 0 {
			t.Errorf("stats when caught up: %+v", st)
		}
	})
}

// TestReplayIsIdempotent: an index whose watermark is older than what it
// holds (a crash lost the batches after it) replays the log again and
// ends up equal to the store: updates land on their last version, deleted
// documents stay deleted, nothing is doubled.
func TestReplayIsIdempotent(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		early, err := e.store.LastPosition(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ix := e.start(t)
		for round := range 3 {
			for i := range 30 {
				e.put(t, i, fmt.Sprintf("round%d doc%d", round, i))
			}
			e.del(t, round*7)
		}
		e.caughtUp(t, ix)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		setWatermark(t, filepath.Join(e.dir, fmt.Sprint(e.coll.ID)), early)

		ix = e.start(t)
		e.caughtUp(t, ix)
		if st := ix.Stats(context.Background()); st.Indexes[0].Rebuilds != 0 {
			t.Fatalf("restarted with a rebuild: %+v", st)
		}
		e.checkIndex(t, ix)
		// Round 2 wrote all 30 and deleted one.
		if n := len(e.search(t, ix, `{}`, "round2")); n != 29 {
			t.Errorf("round2 finds %d documents, want 29", n)
		}
		if n := len(e.search(t, ix, `{}`, "round0")); n != 0 {
			t.Errorf("round0 (overwritten) finds %d documents", n)
		}
	})
}

// setWatermark rewrites an index's watermark, as a crash that lost its
// last batches would leave it.
func setWatermark(t *testing.T, dir string, p kv.Position) {
	t.Helper()
	idx, err := bleve.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	b := idx.NewBatch()
	b.SetInternal([]byte("folio.watermark"), []byte{byte(p >> 56), byte(p >> 48), byte(p >> 40), byte(p >> 32), byte(p >> 24), byte(p >> 16), byte(p >> 8), byte(p)})
	if err := idx.Batch(b); err != nil {
		t.Fatal(err)
	}
}

// TestRebuildWhileWriting: a corrupt index is rebuilt from the documents
// while writes go on; searches answer ErrRebuilding meanwhile, and the
// rebuilt index, with the log replayed after its position, equals the
// store.
func TestRebuildWhileWriting(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		ix := e.start(t)
		// 600 documents, 50 per transaction: six chunks of the rebuild.
		for i := 0; i < 600; i += 50 {
			batch := make([][]byte, 50)
			for j := range batch {
				batch[j] = []byte(fmt.Sprintf(`{"id":%d,"t":"old %d"}`, i+j, i+j))
			}
			e.tx(t, func(tx kv.Tx) error {
				_, err := e.docs.Insert(context.Background(), tx, e.coll, batch)
				return err
			})
		}
		e.caughtUp(t, ix)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		// Corrupt the index: its metadata no longer parses.
		dir := filepath.Join(e.dir, fmt.Sprint(e.coll.ID))
		if err := os.WriteFile(filepath.Join(dir, "index_meta.json"), []byte("{garbage"), 0o644); err != nil {
			t.Fatal(err)
		}

		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i += 3 {
				e.put(t, i, fmt.Sprintf("new %d", i))
				e.del(t, i+1)
			}
		}()
		ix = e.start(t)
		wg.Wait()
		e.caughtUp(t, ix)
		e.checkIndex(t, ix)
		if st := ix.Stats(context.Background()); st.Indexes[0].Rebuilds != 1 {
			t.Errorf("the corrupt index was rebuilt %d times, want once: %+v", st.Indexes[0].Rebuilds, st)
		}
	})
}

// minus is what a holds and b does not (both sorted), at most 10.
func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if _, found := slices.BinarySearch(b, x); !found && len(out) < 10 {
			out = append(out, x)
		}
	}
	return out
}

// TestTrimmedPastTheWatermark: an indexer that was stopped while the log
// was trimmed past its watermark cannot replay; it rebuilds its indexes
// from the documents and ends up equal to the store.
func TestTrimmedPastTheWatermark(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		e := newEnv(t, b)
		e.clog = changelog.NewLog(e.store, changelog.Options{Retention: time.Hour})
		ix := e.start(t)
		for i := range 20 {
			e.put(t, i, fmt.Sprintf("kept %d", i))
		}
		e.caughtUp(t, ix)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		for i := 10; i < 30; i++ {
			e.put(t, i, fmt.Sprintf("later %d", i))
		}
		e.del(t, 3)
		// Two ticks a retention apart trim everything up to the first.
		now := time.Now()
		ctx := context.Background()
		if err := e.clog.Tick(ctx, now); err != nil {
			t.Fatal(err)
		}
		e.put(t, 100, "after the note")
		if err := e.clog.Tick(ctx, now.Add(2*time.Hour)); err != nil {
			t.Fatal(err)
		}

		ix = e.start(t)
		e.caughtUp(t, ix)
		e.checkIndex(t, ix)
		if st := ix.Stats(ctx); st.Indexes[0].Rebuilds != 1 {
			t.Errorf("rebuilds: %+v, want one", st)
		}
	})
}

// TestSmallBatchBytes: with a byte bound below one document, every batch
// holds one entry, and the index still ends up equal to the store.
func TestSmallBatchBytes(t *testing.T) {
	e := newEnv(t, backendtest.All[0])
	ix := search.New(e.clog, search.Options{Dir: e.dir, BatchBytes: 64})
	if err := ix.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	for i := range 40 {
		e.put(t, i, fmt.Sprintf("long text of document %d %s", i, strings.Repeat("x", 100)))
	}
	for i := range 10 {
		e.put(t, i, fmt.Sprintf("replaced %d", i))
	}
	e.del(t, 39)
	e.caughtUp(t, ix)
	e.checkIndex(t, ix)
}

// BenchmarkIndexing: how fast the indexer follows writes of transactions
// of 500 documents of about 150 words (the time includes the writes).
func BenchmarkIndexing(b *testing.B) {
	e := newEnv(b, backendtest.All[0])
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	// Every document's text differs, as real ones do.
	text := func(doc int) string {
		var t strings.Builder
		for i := range 150 {
			t.WriteString(words[(i*7+doc*3)%len(words)] + fmt.Sprint((i*doc)%997) + " ")
		}
		return t.String()
	}
	ix := search.New(e.clog, search.Options{Dir: e.dir})
	if err := ix.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	caughtUp := func() {
		last, _ := e.store.LastPosition(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := ix.WaitFor(ctx, e.coll.ID, last); err != nil {
			b.Fatal(err)
		}
	}
	caughtUp()
	cpu0 := cpuTime()
	b.ResetTimer()
	const perTx = 500
	for n := 0; n < b.N; n += perTx {
		var docsJSON [][]byte
		for i := n; i < min(n+perTx, b.N); i++ {
			docsJSON = append(docsJSON, []byte(fmt.Sprintf(`{"id":%d,"t":%q}`, i, text(i))))
		}
		e.tx(b, func(tx kv.Tx) error {
			_, err := e.docs.Replace(context.Background(), tx, e.coll, docsJSON)
			return err
		})
	}
	caughtUp()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	// CPU time tells more than docs/s on a shared machine.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/doc")
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ns is the namespace the tests keep their databases in.
const ns = keyspace.DefaultNamespace
