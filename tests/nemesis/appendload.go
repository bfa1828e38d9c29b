package nemesis

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/tests/history"
)

// The list-append workload (Elle's; Kingsbury and Alvaro, VLDB 2020):
// each document holds a list of integers; a transaction reads some lists
// and appends values to some, every value unique for its key, so that a
// read names the versions it saw and their order. Keys are retired after
// maxAppends appends and replaced by fresh ones, which keeps lists short
// and the dependency graph dense with conflicts.

const (
	appendColl = "lists"
	activeKeys = 10 // keys written at any time
	maxAppends = 32 // appends to a key before it is retired
	maxMops    = 4  // micro-operations in a transaction, at most
)

type listDoc struct {
	ID   string  `json:"id" tigris:"primaryKey:1"`
	Vals []int64 `json:"vals"`
}

type appendLoad struct {
	rec *recorder

	mu      sync.Mutex
	keys    []int       // the active keys
	appends map[int]int // appends issued to each key
	next    int         // the next new key
	nextVal int64       // values are unique over the whole run
}

func newAppendLoad(rec *recorder) *appendLoad {
	w := &appendLoad{rec: rec, appends: map[int]int{}}
	for range activeKeys {
		w.keys = append(w.keys, w.next)
		w.next++
	}
	return w
}

func keyName(k int) string { return "k" + strconv.Itoa(k) }

func (w *appendLoad) setup(ctx context.Context, db *client.Database) error {
	schema, err := client.SchemaOf[listDoc](appendColl)
	if err != nil {
		return err
	}
	return db.CreateCollection(ctx, appendColl, schema)
}

// txn draws a transaction: one to maxMops micro-operations on active
// keys, reads and appends in even measure.
func (w *appendLoad) txn(rng *rand.Rand) []history.Mop {
	w.mu.Lock()
	defer w.mu.Unlock()
	mops := make([]history.Mop, 1+rng.IntN(maxMops))
	for i := range mops {
		slot := rng.IntN(len(w.keys))
		k := w.keys[slot]
		if rng.IntN(2) == 0 {
			mops[i] = history.Read(keyName(k))
			continue
		}
		w.nextVal++
		mops[i] = history.Append(keyName(k), w.nextVal)
		if w.appends[k]++; w.appends[k] == maxAppends {
			w.keys[slot] = w.next
			w.next++
		}
	}
	return mops
}

// step runs one transaction on c as process p, records it and returns
// its error.
func (w *appendLoad) step(ctx context.Context, c *client.Client, rng *rand.Rand, p int) error {
	mops := w.txn(rng)
	w.rec.record(history.Event{Process: p, Type: history.Invoke, F: history.FTxn, Txn: mops})
	done := slices.Clone(mops)
	// Two ways to append, drawn per transaction: read the list and
	// replace the document, or $push to it (inserting the document when
	// the update finds none): the server's read-modify-write and its own.
	push := rng.IntN(2) == 0
	commitSent := false
	err := c.Database(dbName).Tx(ctx, func(tx *client.Tx) error {
		lists := client.Coll[listDoc](tx, appendColl)
		for i, m := range mops {
			switch m.F {
			case history.MRead:
				vals, err := readList(ctx, lists, m.Key)
				if err != nil {
					return err
				}
				done[i].Read = vals
			case history.MAppend:
				if err := appendTo(ctx, lists, m.Key, m.Value, push); err != nil {
					return err
				}
			}
		}
		commitSent = true
		return nil
	})
	e := history.Event{Process: p, Type: outcome(err, commitSent), F: history.FTxn, Txn: mops}
	if err != nil {
		e.Error = err.Error()
	} else {
		e.Txn = done
	}
	w.rec.record(e)
	return err
}

// readList reads a key's list: empty (not nil: observed) if there is no
// document.
func readList(ctx context.Context, lists *client.Collection[listDoc], key string) ([]int64, error) {
	d, err := lists.ReadOne(ctx, client.Eq("id", key))
	if errors.Is(err, client.ErrNoDocument) {
		return []int64{}, nil
	}
	if err != nil {
		return nil, err
	}
	if d.Vals == nil {
		return []int64{}, nil
	}
	return d.Vals, nil
}

func appendTo(ctx context.Context, lists *client.Collection[listDoc], key string, v int64, push bool) error {
	if push {
		n, err := lists.Update(ctx, client.Eq("id", key), client.RawUpdate(fmt.Appendf(nil, `{"$push":{"vals":%d}}`, v)))
		if err != nil || n == 1 {
			return err
		}
		_, err = lists.Insert(ctx, &listDoc{ID: key, Vals: []int64{v}})
		return err
	}
	vals, err := readList(ctx, lists, key)
	if err != nil {
		return err
	}
	_, err = lists.Replace(ctx, &listDoc{ID: key, Vals: append(vals, v)})
	return err
}

// final reads every list in one transaction, once the faults and the
// clients have stopped, as process p: with real-time order, an append
// acknowledged before it and missing from it is lost.
func (w *appendLoad) final(ctx context.Context, c *client.Client, p int) error {
	w.mu.Lock()
	var mops []history.Mop
	for k := range w.next {
		mops = append(mops, history.Read(keyName(k)))
	}
	w.mu.Unlock()
	w.rec.record(history.Event{Process: p, Type: history.Invoke, F: history.FTxn, Txn: mops})
	got := map[string][]int64{}
	err := c.Database(dbName).Tx(ctx, func(tx *client.Tx) error {
		clear(got)
		for d, err := range client.Coll[listDoc](tx, appendColl).Read(ctx, client.All()) {
			if err != nil {
				return err
			}
			got[d.ID] = d.Vals
		}
		return nil
	})
	if err != nil {
		w.rec.record(history.Event{Process: p, Type: history.Fail, F: history.FTxn, Txn: mops, Error: err.Error()})
		return fmt.Errorf("the final read of every list: %w", err)
	}
	done := slices.Clone(mops)
	for i := range done {
		done[i].Read = got[done[i].Key]
		if done[i].Read == nil {
			done[i].Read = []int64{}
		}
	}
	w.rec.record(history.Event{Process: p, Type: history.OK, F: history.FTxn, Txn: done})
	return nil
}
