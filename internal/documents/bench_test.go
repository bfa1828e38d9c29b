package documents

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// A document of 12 fields, about 1 KB, for the cost of "every field
// indexed".
const twelveFields = `{"title":"big","primary_key":["id"],"properties":{
	"id":{"type":"integer"},"name":{"type":"string"},"email":{"type":"string"},"age":{"type":"integer"},
	"score":{"type":"number"},"active":{"type":"boolean"},"city":{"type":"string"},"country":{"type":"string"},
	"created":{"type":"string","format":"date-time"},"plan":{"type":"string"},"visits":{"type":"integer"},
	"bio":{"type":"string"}}}`

func twelveFieldDoc(id int64) []byte {
	return []byte(fmt.Sprintf(`{"id":%d,"name":"User %d","email":"user%d@example.com","age":%d,"score":%d.5,"active":%t,`+
		`"city":"City %d","country":"Country %d","created":"2022-09-%02dT10:00:00Z","plan":"plan-%d","visits":%d,"bio":"%s"}`,
		id, id, id, id%90, id%100, id%2 == 0, id%500, id%50, id%28+1, id%4, id*7%1000, bio))
}

var bio = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit."

// BenchmarkInsert: one 12-field document per transaction from 16
// goroutines, durable, with every field indexed and with index
// maintenance off (which reads would not survive: it measures the cost).
// It also reports the index's size per document.
func BenchmarkInsert(b *testing.B) {
	for _, indexed := range []bool{true, false} {
		b.Run(fmt.Sprintf("indexed=%v", indexed), func(b *testing.B) { benchInsert(b, twelveFields, !indexed) })
	}
}

// BenchmarkInsertUnique is BenchmarkInsert's indexed case with the email
// field unique and without: what the unique check adds to an insert (one
// scan of the value's entries, which finds none).
func BenchmarkInsertUnique(b *testing.B) {
	for _, unique := range []bool{false, true} {
		b.Run(fmt.Sprintf("unique=%v", unique), func(b *testing.B) {
			schema := twelveFields
			if unique {
				schema = strings.Replace(schema, `"email":{"type":"string"}`, `"email":{"type":"string","unique":true}`, 1)
			}
			benchInsert(b, schema, false)
		})
	}
}

// benchInsert inserts one document of schema per transaction from 16
// goroutines, durable, with index maintenance off if noIndexes.
func benchInsert(b *testing.B, schema string, noIndexes bool) {
	store, coll := newCollection(b, schema)
	s := New()
	s.noIndexes = noIndexes
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for w := 0; w < 16; w++ {
		n := b.N / 16
		if w == 0 {
			n += b.N % 16
		}
		wg.Add(1)
		go func(n int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				doc := twelveFieldDoc(next.Add(1))
				if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
					_, err := s.Insert(ctx, tx, coll, [][]byte{doc})
					return err
				}); err != nil {
					b.Error(err)
					return
				}
			}
		}(n)
	}
	wg.Wait()
	b.StopTimer()
	// The process's CPU time per insert moves less with the machine's
	// other work than ns/op does.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "docs/s")
	keys, bytes := rangeSize(b, store, keyspace.Indexes(coll.ID))
	b.ReportMetric(float64(keys)/float64(b.N), "index-keys/doc")
	b.ReportMetric(float64(bytes)/float64(b.N), "index-bytes/doc")
}

func rangeSize(b *testing.B, store kv.Store, r kv.Range) (keys, bytes int64) {
	tx, err := store.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	it := tx.Snapshot().Scan(ctx, r, kv.ScanOptions{})
	defer it.Close()
	for it.Next() {
		keys++
		bytes += int64(len(it.Key()) + len(it.Value()))
	}
	return keys, bytes
}

const fourFields = `{"title":"big","primary_key":["id"],"properties":{
	"id":{"type":"integer"},"name":{"type":"string"},"age":{"type":"integer"},"bio":{"type":"string"}}}`

// BenchmarkIndexSize reports how the index grows with documents and with
// fields: the bytes of index entries per document and per document byte,
// for 4- and 12-field documents of about 1 KB, at 1,000 and 10,000
// documents. (b.N does not matter: it loads its own data once per run.)
func BenchmarkIndexSize(b *testing.B) {
	for _, shape := range []struct {
		name   string
		schema string
		doc    func(int64) []byte
	}{
		{"fields=4", fourFields, func(id int64) []byte {
			return []byte(fmt.Sprintf(`{"id":%d,"name":"User %d","age":%d,"bio":"%s"}`, id, id, id%90, bio))
		}},
		{"fields=12", twelveFields, twelveFieldDoc},
	} {
		for _, n := range []int64{1000, 10000} {
			b.Run(fmt.Sprintf("%s/docs=%d", shape.name, n), func(b *testing.B) {
				store, coll := newCollection(b, shape.schema)
				s := New()
				var docBytes int64
				for start := int64(0); start < n; start += 500 {
					var batch [][]byte
					for id := start; id < start+500; id++ {
						d := shape.doc(id)
						docBytes += int64(len(d))
						batch = append(batch, d)
					}
					if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
						_, err := s.Insert(ctx, tx, coll, batch)
						return err
					}); err != nil {
						b.Fatal(err)
					}
				}
				keys, bytes := rangeSize(b, store, keyspace.Indexes(coll.ID))
				b.ReportMetric(float64(keys)/float64(n), "index-keys/doc")
				b.ReportMetric(float64(bytes)/float64(n), "index-bytes/doc")
				b.ReportMetric(float64(bytes)/float64(docBytes), "index-bytes/doc-byte")
			})
		}
	}
}
