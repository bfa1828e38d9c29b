package loadgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// memDriver is a Driver over a map, to test the runner without a server.
// failReads makes every read fail; abortCommits refuses every commit.
type memDriver struct {
	mu           sync.Mutex
	docs         map[int64][]byte
	ops          []string // every operation, in order, when record is set
	record       bool
	batches      int
	failReads    bool
	abortCommits bool
}

func newMemDriver() *memDriver { return &memDriver{docs: map[int64][]byte{}} }

func (d *memDriver) note(op string, id int64) {
	if d.record {
		d.ops = append(d.ops, fmt.Sprintf("%s %d", op, id))
	}
}

func (d *memDriver) Name() string { return "mem" }
func (d *memDriver) Close() error { return nil }

func (d *memDriver) Setup(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.docs = map[int64][]byte{}
	return nil
}

func (d *memDriver) InsertBatch(ctx context.Context, docs []Document) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.batches++
	for _, doc := range docs {
		if _, ok := d.docs[doc.ID]; ok {
			return fmt.Errorf("duplicate %d", doc.ID)
		}
		d.docs[doc.ID] = append([]byte(nil), doc.JSON...)
	}
	return nil
}

func (d *memDriver) FinishLoad(ctx context.Context) error { return nil }

func (d *memDriver) Trim(ctx context.Context, from int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id := range d.docs {
		if id >= from {
			delete(d.docs, id)
		}
	}
	return nil
}

func (d *memDriver) Read(ctx context.Context, id int64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("read", id)
	if d.failReads {
		return errors.New("read failed")
	}
	if _, ok := d.docs[id]; !ok {
		return fmt.Errorf("read %d: not found", id)
	}
	return nil
}

func (d *memDriver) Update(ctx context.Context, id int64, field, value string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("update", id)
	if _, ok := d.docs[id]; !ok {
		return fmt.Errorf("update %d: not found", id)
	}
	return nil
}

func (d *memDriver) Insert(ctx context.Context, doc Document) error {
	d.mu.Lock()
	d.note("insert", doc.ID)
	d.mu.Unlock()
	return d.InsertBatch(ctx, []Document{doc})
}

func (d *memDriver) Scan(ctx context.Context, id int64, limit int) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("scan", id)
	n := 0
	for k := id; n < limit; k++ {
		if _, ok := d.docs[k]; !ok {
			break
		}
		n++
	}
	return n, nil
}

func (d *memDriver) FindEqual(ctx context.Context, email string) (int, error) {
	var id int64
	if _, err := fmt.Sscanf(email, "user%d@example.com", &id); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("find-eq", id)
	if _, ok := d.docs[id]; ok {
		return 1, nil
	}
	return 0, nil
}

func (d *memDriver) FindRange(ctx context.Context, lo, hi int64) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("find-range", lo)
	return int(hi - lo), nil
}

func (d *memDriver) FindGroup(ctx context.Context, group string, limit int) (int, error) {
	var g int64
	if _, err := fmt.Sscanf(group, "g%d", &g); err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("find-few", g)
	n := 0
	for id := range d.docs {
		if id%Groups == g && n < limit {
			n++
		}
	}
	return n, nil
}

func (d *memDriver) FindRangeLimit(ctx context.Context, lo, hi int64, limit int) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("find-wide", lo)
	return int(min(hi-lo, int64(limit))), nil
}

func (d *memDriver) CountRange(ctx context.Context, lo, hi int64) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.note("count", lo)
	return hi - lo, nil
}

func (d *memDriver) Read2023(ctx context.Context, id int64) error { return d.Read(ctx, id) }

func (d *memDriver) Begin(ctx context.Context) (Tx, error) { return memTx{d}, nil }

type memTx struct{ d *memDriver }

func (t memTx) Read(ctx context.Context, id int64) error { return t.d.Read(ctx, id) }
func (t memTx) Update(ctx context.Context, id int64, f, v string) error {
	return t.d.Update(ctx, id, f, v)
}
func (t memTx) Rollback(ctx context.Context) error { return nil }
func (t memTx) Commit(ctx context.Context) error {
	if t.d.abortCommits {
		return fmt.Errorf("commit: %w", ErrAborted)
	}
	return nil
}

func loaded(t *testing.T, docs int64) (*memDriver, Dataset) {
	t.Helper()
	d := newMemDriver()
	data := Dataset{Docs: docs, Seed: 1}
	if _, err := Load(context.Background(), LoadConfig{Driver: d, Data: data, Clients: 3, BatchSize: 7}); err != nil {
		t.Fatal(err)
	}
	return d, data
}

func TestLoadInsertsEveryDocumentOnce(t *testing.T) {
	d, _ := loaded(t, 100)
	if len(d.docs) != 100 {
		t.Errorf("%d documents loaded, want 100", len(d.docs))
	}
	if d.batches != 15 { // ceil(100/7)
		t.Errorf("%d batches, want 15", d.batches)
	}
}

func TestRunStopsAtMaxOps(t *testing.T) {
	for _, w := range Workloads {
		t.Run(w.Name, func(t *testing.T) {
			d, data := loaded(t, 200)
			res, err := Run(context.Background(), RunConfig{Driver: d, Workload: w, Data: data, Clients: 4,
				Duration: time.Minute, MaxOps: 500, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			total := res.Total()
			if done := total.Hist.Count() + total.Errors + total.Aborts; done != 500 {
				t.Errorf("%d operations, want exactly MaxOps = 500", done)
			}
			if total.Errors != 0 {
				t.Errorf("%d errors: %s", total.Errors, total.FirstError)
			}
			if len(d.docs) < 200 {
				t.Errorf("%d documents after the run, the loaded 200 must stay", len(d.docs))
			}
		})
	}
}

func TestRunStopsAtDuration(t *testing.T) {
	d, data := loaded(t, 100)
	w, _ := LookupWorkload("A")
	start := time.Now()
	res, err := Run(context.Background(), RunConfig{Driver: d, Workload: w, Data: data, Clients: 2, Duration: 100 * time.Millisecond, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a 100ms run took %v", took)
	}
	if res.Total().Hist.Count() == 0 || res.Elapsed < 100*time.Millisecond {
		t.Errorf("%d operations in %v", res.Total().Hist.Count(), res.Elapsed)
	}
}

// Each run starts from the loaded documents: what an earlier run inserted
// is trimmed, and new ids start after the loaded ones again.
func TestRunTrimsEarlierInserts(t *testing.T) {
	d, data := loaded(t, 50)
	w, _ := LookupWorkload("insert")
	for range 2 {
		res, err := Run(context.Background(), RunConfig{Driver: d, Workload: w, Data: data, Clients: 2, Duration: time.Minute, MaxOps: 30, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if e := res.Total().Errors; e != 0 {
			t.Fatalf("%d errors (a duplicate key means the trim did not happen): %s", e, res.Total().FirstError)
		}
	}
	if len(d.docs) != 80 {
		t.Errorf("%d documents, want 50 loaded + 30 of the last run", len(d.docs))
	}
}

// The same seed must give the same operations and keys (one client, so
// that the order is the clients' own).
func TestRunIsReproducible(t *testing.T) {
	sequence := func(seed uint64) []string {
		d, data := loaded(t, 300)
		d.record = true
		w, _ := LookupWorkload("F")
		if _, err := Run(context.Background(), RunConfig{Driver: d, Workload: w, Data: data, Clients: 1, Duration: time.Minute, MaxOps: 200, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		return d.ops
	}
	a, b, c := sequence(5), sequence(5), sequence(6)
	if strings.Join(a, ";") != strings.Join(b, ";") {
		t.Error("the same seed gave different operations")
	}
	if strings.Join(a, ";") == strings.Join(c, ";") {
		t.Error("different seeds gave the same operations")
	}
}

func TestRunCountsErrorsAndAborts(t *testing.T) {
	d, data := loaded(t, 100)
	d.failReads = true
	c, _ := LookupWorkload("B")
	res, err := Run(context.Background(), RunConfig{Driver: d, Workload: c, Data: data, Clients: 2, Duration: time.Minute, MaxOps: 400, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	read, update := res.Ops[0], res.Ops[1]
	if read.Op != OpRead || read.Hist.Count() != 0 || read.Errors == 0 || read.FirstError != "read failed" {
		t.Errorf("failing reads: %d ok, %d errors, first %q", read.Hist.Count(), read.Errors, read.FirstError)
	}
	if update.Errors != 0 || update.Hist.Count() == 0 {
		t.Errorf("updates: %d ok, %d errors", update.Hist.Count(), update.Errors)
	}

	d.failReads, d.abortCommits = false, true
	tx, _ := LookupWorkload("tx")
	res, err = Run(context.Background(), RunConfig{Driver: d, Workload: tx, Data: data, Clients: 2, Duration: time.Minute, MaxOps: 100, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Ops[0]; o.Aborts != 100 || o.Errors != 0 || o.Hist.Count() != 0 {
		t.Errorf("refused commits: %d aborts, %d errors, %d ok; want 100 aborts only", o.Aborts, o.Errors, o.Hist.Count())
	}
}

func TestRunChecksItsConfig(t *testing.T) {
	d, data := loaded(t, 10)
	w, _ := LookupWorkload("C")
	for _, cfg := range []RunConfig{
		{Workload: w, Data: data, Clients: 1, Duration: time.Second},
		{Driver: d, Workload: w, Data: data, Clients: 0, Duration: time.Second},
		{Driver: d, Workload: w, Data: data, Clients: 1},
		{Driver: d, Workload: w, Clients: 1, Duration: time.Second},
		{Driver: d, Workload: w, Data: data, Clients: 1, Duration: time.Second, Distribution: "normal"},
	} {
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("Run accepted %+v", cfg)
		}
	}
}
