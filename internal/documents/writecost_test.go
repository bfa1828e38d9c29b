package documents

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/keyenc"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/loadgen"
)

// BenchmarkWriteCost measures what an insert makes the embedded store
// write, in figures that do not depend on the machine's load: b.N inserts
// of bench-compare's document (loadgen's: 13 fields, about 1.1 KB), one a
// transaction from 16 writers as its insert workload does, durable; then a
// manual compaction of everything into the bottom level. Per insert:
//
//   - cpu-µs/op: the process's CPU time during the load (the inserts and
//     Pebble's flushes and compactions meanwhile), less moved by the
//     machine's other work than ns/op;
//   - keys/op, keybytes/op, valbytes/op: what the transactions wrote
//     (documents' Set, Clear and Add, and the change log's records),
//     logged by kind;
//   - batchkeys/op, batchbytes/op: what went into Pebble's batches, after
//     the commit groups made of them what they make (and their position
//     key);
//   - walbytes/op, flushbytes/op, compactbytes/op: what Pebble wrote to its
//     WAL, flushed from its memtables, and compacted during the load;
//   - finalbytes/op: the manual compaction's writes; writtenbytes/op all
//     of Pebble's writes, the WAL's, the flushes', the compactions' (how
//     the load's split between compactions during the load and the final
//     one depends on timing; their sum much less); diskbytes/op the disk
//     the store takes at the end.
//
// Run it with -benchtime 50000x for bench-compare's 50,000 documents.
func BenchmarkWriteCost(b *testing.B) {
	store, coll := newCollection(b, loadgenSchema(b))
	pebble, ok := store.(*pebblekv.Store)
	if !ok {
		b.Fatalf("want the embedded store, have %T", store)
	}
	data := loadgen.Dataset{Docs: int64(b.N), Seed: 1}
	s := New()
	var written writeCounts
	before := pebble.Stats().Written
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	cpu0 := cpuTime()
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for {
				id := next.Add(1) - 1
				if id >= int64(b.N) {
					return
				}
				buf = data.AppendDocument(buf[:0], id)
				if _, err := kv.Run(ctx, store, func(tx kv.Tx) error {
					_, err := s.Insert(ctx, &countingTx{Tx: tx, counts: &written}, coll, [][]byte{buf})
					return err
				}); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	cpu := cpuTime() - cpu0
	loaded := pebble.Stats().Written
	if err := pebble.Compact(ctx); err != nil {
		b.Fatal(err)
	}
	final := pebble.Stats()

	n := float64(b.N)
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-µs/op")
	keys, keyBytes, valBytes := written.total()
	b.ReportMetric(float64(keys)/n, "keys/op")
	b.ReportMetric(float64(keyBytes)/n, "keybytes/op")
	b.ReportMetric(float64(valBytes)/n, "valbytes/op")
	b.ReportMetric(float64(loaded.BatchKeys-before.BatchKeys)/n, "batchkeys/op")
	b.ReportMetric(float64(loaded.BatchBytes-before.BatchBytes)/n, "batchbytes/op")
	b.ReportMetric(float64(loaded.WALBytes-before.WALBytes)/n, "walbytes/op")
	b.ReportMetric(float64(loaded.FlushedBytes-before.FlushedBytes)/n, "flushbytes/op")
	b.ReportMetric(float64(loaded.CompactedBytes-before.CompactedBytes)/n, "compactbytes/op")
	b.ReportMetric(float64(final.Written.FlushedBytes+final.Written.CompactedBytes-loaded.FlushedBytes-loaded.CompactedBytes)/n, "finalbytes/op")
	b.ReportMetric(float64(final.Written.WALBytes+final.Written.FlushedBytes+final.Written.CompactedBytes-before.WALBytes-before.FlushedBytes-before.CompactedBytes)/n, "writtenbytes/op")
	b.ReportMetric(float64(final.DiskBytes)/n, "diskbytes/op")
	b.Logf("per insert, by kind, of %d:\n%s", b.N, written.table(n))
}

// loadgenSchema is bench-compare's collection schema, as the catalog takes
// it (the body of a createOrUpdate request holds it under "schema").
func loadgenSchema(tb testing.TB) string {
	body := string(loadgen.Schema("big"))
	inner, ok := strings.CutPrefix(body, `{"schema":`)
	if !ok {
		tb.Fatalf("unexpected schema body %s", body)
	}
	return strings.TrimSuffix(inner, "}")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingTx counts what a transaction writes, by the kind of key.
type countingTx struct {
	kv.Tx
	counts *writeCounts
}

func (t *countingTx) Set(key, value []byte) error {
	t.counts.add(keyKind(key), len(key), len(value))
	return t.Tx.Set(key, value)
}

func (t *countingTx) Clear(key []byte) error {
	t.counts.add(keyKind(key)+" (clear)", len(key), 0)
	return t.Tx.Clear(key)
}

func (t *countingTx) Add(key []byte, delta int64) error {
	t.counts.add(keyKind(key), len(key), len(kv.EncodeCounter(delta)))
	return t.Tx.Add(key, delta)
}

func (t *countingTx) AppendLog(record []byte) error {
	t.counts.add("log record", 0, len(record))
	return t.Tx.AppendLog(record)
}

// keyKind names a key by its first element (keyspace's tags).
func keyKind(key []byte) string {
	tag, _, err := keyenc.DecodeOne(key)
	if err != nil {
		return "unknown"
	}
	switch tag {
	case "d":
		return "document"
	case "i":
		return "index entry"
	case "s":
		return "counter"
	}
	return fmt.Sprintf("%v", tag)
}

type writeCounts struct {
	mu     sync.Mutex
	byKind map[string]*kindCount
}

type kindCount struct{ keys, keyBytes, valBytes int64 }

func (w *writeCounts) add(kind string, key, value int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byKind == nil {
		w.byKind = make(map[string]*kindCount)
	}
	c := w.byKind[kind]
	if c == nil {
		c = &kindCount{}
		w.byKind[kind] = c
	}
	c.keys++
	c.keyBytes += int64(key)
	c.valBytes += int64(value)
}

func (w *writeCounts) total() (keys, keyBytes, valBytes int64) {
	for _, c := range w.byKind {
		keys += c.keys
		keyBytes += c.keyBytes
		valBytes += c.valBytes
	}
	return keys, keyBytes, valBytes
}

func (w *writeCounts) table(n float64) string {
	kinds := make([]string, 0, len(w.byKind))
	for k := range w.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var out bytes.Buffer
	fmt.Fprintf(&out, "%-20s %8s %10s %10s\n", "kind", "keys", "key bytes", "val bytes")
	for _, k := range kinds {
		c := w.byKind[k]
		fmt.Fprintf(&out, "%-20s %8.2f %10.1f %10.1f\n", k, float64(c.keys)/n, float64(c.keyBytes)/n, float64(c.valBytes)/n)
	}
	return out.String()
}
