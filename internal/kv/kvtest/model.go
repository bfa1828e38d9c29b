package kvtest

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// modelSeedEnv reruns testModel with one seed, the one a failure printed.
const modelSeedEnv = "FOLIO_KVTEST_SEED"

// modelKeys is the key space of testModel: few keys, so that writes, clears
// and scans keep meeting each other, with the byte-order edges that range
// bounds get wrong (the empty key, a key and its extension by 0x00, a 0xFF
// byte inside a key).
var modelKeys = []string{
	"", "\x00", "a", "a\x00", "a\x00\x00", "aa", "ab", "ab\xff", "b", "b\x00", "ba", "bb",
	"c", "ca", "cab", "cb", "d", "d\xff", "d\xff\xff", "e",
}

// testModel runs random transactions against the store and against a model,
// a map of the committed state copied into each transaction and updated by
// its own writes, and compares every read with it: Get and Scan, forward and
// reverse, limited or not, through the transaction and its snapshot view,
// and scans that go on while the transaction writes. Now and then another
// transaction commits blind writes in the middle of one, which must not show
// in it, and which its commit must build on.
func testModel(t *testing.T, s kv.Store, h Harness) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(modelSeedEnv); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", modelSeedEnv, v, err)
		}
	}
	m := &modelRun{t: t, s: s, h: h, rng: rand.New(rand.NewPCG(seed, 0x6b76)), committed: map[string]string{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d (rerun with %s=%d); transaction %d so far:\n\t%s",
				seed, modelSeedEnv, seed, m.txs, strings.Join(m.trace, "\n\t"))
		}
	})
	txs, budget := 300, 3*time.Second
	if testing.Short() {
		txs, budget = 60, time.Second
	}
	// The budget bounds the time on a slow machine; a rerun with the same
	// seed does the same transactions in the same order.
	start := time.Now()
	for m.txs < txs && time.Since(start) < budget {
		m.txs++
		m.runTx()
		if m.txs%20 == 0 {
			m.checkAll()
		}
	}
	m.checkAll()
	t.Logf("%d random transactions against the model in %s (seed %d); %d commits conflicted, %d of them spuriously",
		m.txs, time.Since(start).Round(time.Millisecond), seed, m.conflicts, m.spurious)
}

// modelRun is one run of testModel.
type modelRun struct {
	t         *testing.T
	s         kv.Store
	h         Harness
	rng       *rand.Rand
	committed map[string]string
	lastPos   kv.Position // the position of the newest commit that wrote
	txs       int         // transactions begun
	conflicts int         // commits that failed with a conflict
	spurious  int         // of those, the ones nothing explains

	// The transaction under way.
	tx      kv.Tx
	state   map[string]string // what the transaction must read
	writes  []modelWrite      // its writes, replayed on the committed state
	trace   []string          // what it did, for the failure message
	read    bool              // it read with conflicts (not only snapshot reads)
	crossed bool              // another transaction committed while it was open
}

type writeKind uint8

const (
	wSet writeKind = iota
	wClear
	wClearRange
	wAdd
)

// modelWrite is one write, as the model applies it.
type modelWrite struct {
	kind  writeKind
	key   string
	r     kv.Range
	value string
	delta int64
}

func (w modelWrite) String() string {
	switch w.kind {
	case wSet:
		return fmt.Sprintf("Set(%q, %q)", w.key, w.value)
	case wClear:
		return fmt.Sprintf("Clear(%q)", w.key)
	case wClearRange:
		return "ClearRange" + rangeString(w.r)
	default:
		return fmt.Sprintf("Add(%q, %d)", w.key, w.delta)
	}
}

// writes tells whether w writes anything: an empty ClearRange does not, and
// a commit of nothing else gets no position of its own.
func (w modelWrite) writes() bool { return w.kind != wClearRange || !w.r.Empty() }

func rangeString(r kv.Range) string {
	if r.End == nil {
		return fmt.Sprintf("[%q, nil)", r.Begin)
	}
	return fmt.Sprintf("[%q, %q)", r.Begin, r.End)
}

// apply performs w on the model state m.
func (w modelWrite) apply(m map[string]string) {
	switch w.kind {
	case wSet:
		m[w.key] = w.value
	case wClear:
		delete(m, w.key)
	case wClearRange:
		for k := range m {
			if w.r.Contains([]byte(k)) {
				delete(m, k)
			}
		}
	case wAdd:
		m[w.key] = string(kv.EncodeCounter(kv.DecodeCounter([]byte(m[w.key])) + w.delta))
	}
}

// do performs w on tx.
func (w modelWrite) do(tx kv.Tx) error {
	switch w.kind {
	case wSet:
		return tx.Set([]byte(w.key), []byte(w.value))
	case wClear:
		return tx.Clear([]byte(w.key))
	case wClearRange:
		return tx.ClearRange(w.r)
	default:
		return tx.Add([]byte(w.key), w.delta)
	}
}

func (m *modelRun) key() string { return modelKeys[m.rng.IntN(len(modelKeys))] }

// randRange returns a range over the key space, sometimes empty, sometimes
// open-ended (nil End).
func (m *modelRun) randRange() kv.Range {
	b, e := m.key(), m.key()
	if b > e {
		b, e = e, b
	}
	r := kv.Range{Begin: []byte(b), End: []byte(e)}
	if m.rng.IntN(4) == 0 {
		r.End = nil
	}
	return r
}

func (m *modelRun) randWrite() modelWrite {
	switch p := m.rng.IntN(10); {
	case p < 4:
		v := "v" + strconv.Itoa(m.rng.IntN(1000))
		switch m.rng.IntN(6) {
		case 0:
			v = ""
		case 1:
			v = string(kv.EncodeCounter(m.rng.Int64N(100)))
		}
		return modelWrite{kind: wSet, key: m.key(), value: v}
	case p < 6:
		return modelWrite{kind: wClear, key: m.key()}
	case p < 7:
		return modelWrite{kind: wClearRange, r: m.randRange()}
	default:
		return modelWrite{kind: wAdd, key: m.key(), delta: m.rng.Int64N(21) - 10}
	}
}

func (m *modelRun) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf(format, args...)
}

func (m *modelRun) note(format string, args ...any) {
	m.trace = append(m.trace, fmt.Sprintf(format, args...))
}

// runTx runs one random transaction and commits or rolls it back.
func (m *modelRun) runTx() {
	m.t.Helper()
	tx, err := m.s.Begin(bg)
	if err != nil {
		m.fatalf("begin: %v", err)
	}
	defer tx.Rollback()
	m.tx, m.state, m.writes, m.trace, m.read, m.crossed = tx, maps.Clone(m.committed), nil, nil, false, false
	// A backend may fix the read version at the first read rather than at
	// Begin (sqlkv does): read once, so that the model's state is the
	// transaction's snapshot either way.
	m.get(tx.Snapshot(), m.key(), true)
	crossAt := -1
	ops := 1 + m.rng.IntN(20)
	if m.rng.IntN(4) == 0 {
		crossAt = m.rng.IntN(ops)
	}
	for i := 0; i < ops; i++ {
		if i == crossAt {
			m.commitOther()
		}
		m.step()
	}
	switch m.rng.IntN(5) {
	case 0:
		m.note("Rollback")
		tx.Rollback()
	default:
		m.note("Commit")
		m.commit()
	}
}

// step does one random operation in the transaction.
func (m *modelRun) step() {
	m.t.Helper()
	switch p := m.rng.IntN(20); {
	case p < 8:
		w := m.randWrite()
		m.write(w)
		if w.kind != wClearRange && m.rng.IntN(3) == 0 {
			// Read your write back at once, through the buffer's own entry.
			m.get(m.tx, w.key, false)
		}
	case p < 11:
		m.get(m.tx, m.key(), false)
	case p < 12:
		m.get(m.tx.Snapshot(), m.key(), true)
	case p < 17:
		m.scan(m.tx, false)
	default:
		m.scan(m.tx.Snapshot(), true)
	}
}

func (m *modelRun) write(w modelWrite) {
	m.t.Helper()
	m.note("%v", w)
	if err := w.do(m.tx); err != nil {
		m.fatalf("%v: %v", w, err)
	}
	w.apply(m.state)
	m.writes = append(m.writes, w)
}

func (m *modelRun) get(r kv.Reader, k string, snapshot bool) {
	m.t.Helper()
	m.note("Get(%q) snapshot=%v", k, snapshot)
	m.read = m.read || !snapshot
	got, err := r.Get(bg, []byte(k))
	want, ok := m.state[k]
	switch {
	case !ok && !errors.Is(err, kv.ErrNotFound):
		m.fatalf("Get(%q) = %q, %v; want not found", k, got, err)
	case ok && err != nil:
		m.fatalf("Get(%q): %v; want %q", k, err, want)
	case ok && string(got) != want:
		m.fatalf("Get(%q) = %q, want %q", k, got, want)
	}
}

// scan compares a random scan with the model; sometimes it writes between
// the keys, which must not change what the scan returns.
func (m *modelRun) scan(r kv.Reader, snapshot bool) {
	m.t.Helper()
	rng := m.randRange()
	opts := kv.ScanOptions{Reverse: m.rng.IntN(2) == 0}
	if m.rng.IntN(3) == 0 {
		opts.Limit = 1 + m.rng.IntN(4)
	}
	writeWhile := m.rng.IntN(4) == 0
	m.note("Scan(%s, reverse=%v, limit=%d) snapshot=%v", rangeString(rng), opts.Reverse, opts.Limit, snapshot)
	m.read = m.read || !snapshot
	want := modelScan(m.state, rng, opts)
	it := r.Scan(bg, rng, opts)
	defer it.Close()
	var got []string
	for it.Next() {
		got = append(got, fmt.Sprintf("%q=%q", it.Key(), it.Value()))
		if writeWhile {
			m.write(m.randWrite())
		}
	}
	if err := it.Err(); err != nil {
		m.fatalf("Scan(%s, %+v): %v", rangeString(rng), opts, err)
	}
	if !slices.Equal(got, want) {
		m.fatalf("Scan(%s, %+v):\n got %v\nwant %v", rangeString(rng), opts, got, want)
	}
}

// modelScan is what a scan of state must return.
func modelScan(state map[string]string, r kv.Range, opts kv.ScanOptions) []string {
	var keys []string
	for k := range state {
		if r.Contains([]byte(k)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if opts.Reverse {
		slices.Reverse(keys)
	}
	if opts.Limit > 0 && len(keys) > opts.Limit {
		keys = keys[:opts.Limit]
	}
	var out []string
	for _, k := range keys {
		out = append(out, fmt.Sprintf("%q=%q", k, state[k]))
	}
	return out
}

// commitOther commits blind writes from another transaction while the
// current one is open. The current transaction must not see them, and its
// commit builds on them. Blind writes never conflict, except with a backend
// that has spurious conflicts: then the other transaction is tried again.
func (m *modelRun) commitOther() {
	m.t.Helper()
	var ws []modelWrite
	var names []string
	for i := 0; i < 1+m.rng.IntN(4); i++ {
		w := m.randWrite()
		ws = append(ws, w)
		names = append(names, w.String())
	}
	m.note("another transaction commits %s", strings.Join(names, ", "))
	for attempt := 1; ; attempt++ {
		pos, err := m.commitWrites(ws)
		if err == nil {
			for _, w := range ws {
				w.apply(m.committed)
			}
			if slices.ContainsFunc(ws, modelWrite.writes) {
				m.checkPos(pos)
			}
			m.crossed = true
			return
		}
		if !m.h.SpuriousConflicts || !errors.Is(err, kv.ErrConflict) || attempt == 10 {
			m.fatalf("commit of the other transaction's blind writes (attempt %d): %v", attempt, err)
		}
	}
}

func (m *modelRun) commitWrites(ws []modelWrite) (kv.Position, error) {
	tx, err := m.s.Begin(bg)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	for _, w := range ws {
		if err := w.do(tx); err != nil {
			return 0, fmt.Errorf("%v: %w", w, err)
		}
	}
	return tx.Commit(bg)
}

// commit commits the current transaction. A conflict needs a cause: it read
// with conflicts while another transaction committed (or the backend has
// spurious conflicts). If it commits, its writes apply on top of whatever
// was committed meanwhile.
func (m *modelRun) commit() {
	m.t.Helper()
	pos, err := m.tx.Commit(bg)
	explained := m.read && m.crossed
	switch {
	case err == nil:
		for _, w := range m.writes {
			w.apply(m.committed)
		}
		if slices.ContainsFunc(m.writes, modelWrite.writes) {
			m.checkPos(pos)
		}
	case errors.Is(err, kv.ErrConflict) && (explained || m.h.SpuriousConflicts):
		m.note("(conflict)")
		m.conflicts++
		if !explained {
			m.spurious++
		}
	default:
		m.fatalf("commit (read with conflicts %v, crossed by another commit %v): %v", m.read, m.crossed, err)
	}
}

func (m *modelRun) checkPos(pos kv.Position) {
	m.t.Helper()
	if pos <= m.lastPos {
		m.fatalf("commit at position %d, not after the previous one at %d", pos, m.lastPos)
	}
	m.lastPos = pos
}

// checkAll compares the whole committed state with a new transaction's view.
func (m *modelRun) checkAll() {
	m.t.Helper()
	tx, err := m.s.Begin(bg)
	if err != nil {
		m.fatalf("begin: %v", err)
	}
	defer tx.Rollback()
	m.trace = []string{"Scan of everything in a new transaction"}
	it := tx.Scan(bg, kv.Range{}, kv.ScanOptions{})
	defer it.Close()
	var got []string
	for it.Next() {
		got = append(got, fmt.Sprintf("%q=%q", it.Key(), it.Value()))
	}
	if err := it.Err(); err != nil {
		m.fatalf("scan everything: %v", err)
	}
	if want := modelScan(m.committed, kv.Range{}, kv.ScanOptions{}); !slices.Equal(got, want) {
		m.fatalf("committed state:\n got %v\nwant %v", got, want)
	}
}
