package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/streams"
)

// Change events (reference §7, and §11: resumable positions).

const itemsSchema = `{"title":"items","primary_key":["id"],"properties":{"id":{"type":"string"},"v":{"type":"integer"}}}`

func withItems(t *testing.T, c *client) {
	t.Helper()
	c.createDB(t, "db1")
	c.createColl(t, "db1", "items", itemsSchema)
	c.createColl(t, "db1", "other", strings.ReplaceAll(itemsSchema, "items", "other"))
}

// What an event says, in short: op, the document (or the key on delete),
// and "!" on the last event of its transaction.
func (e event) String() string {
	s := e.Op + " " + string(e.Data)
	if e.Data == nil {
		s = e.Op + " " + string(e.Key)
	}
	if e.Last {
		s += " !"
	}
	return s
}

func nextEvents(t *testing.T, ls *liveStream, n int) []event {
	t.Helper()
	out := make([]event, n)
	for i := range out {
		out[i] = ls.next(t)
	}
	return out
}

func describe(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.String()
	}
	return out
}

// The events of a transaction share its tx_id, come in the order it wrote
// them, and the last one says so; another transaction has another tx_id.
// Writes to another collection in the same transaction are not in this
// collection's stream, and do not move its "last".
func TestEventsOfATransaction(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		ls := c.openStream(t, eventsPath("db1", "items"), `{}`)

		tx := c.begin(t, "db1")
		tx.ok(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":"a1","v":1},{"id":"b2","v":2}]}`)
		tx.ok(t, "PUT", docPath("db1", "items", "update"), `{"filter":{"id":"a1"},"fields":{"$set":{"v":10}}}`)
		tx.ok(t, "PUT", docPath("db1", "items", "replace"), `{"documents":[{"id":"c3","v":3}]}`)
		tx.ok(t, "DELETE", docPath("db1", "items", "delete"), `{"filter":{"id":"b2"}}`)
		tx.ok(t, "POST", docPath("db1", "other", "insert"), `{"documents":[{"id":"zz","v":0}]}`)
		if r := tx.commit(t); r.status != 200 {
			t.Fatalf("commit: %s", r)
		}
		c.insert(t, "db1", "items", `{"id":"d4","v":4}`, `{"id":"e5","v":5}`)

		evs := nextEvents(t, ls, 7)
		equalStrings(t, "events", describe(evs[:4]), []string{
			`insert {"id":"a1","v":1}`, `insert {"id":"b2","v":2}`, `update {"id":"a1","v":10}`, `replace {"id":"c3","v":3}`,
		})
		if del := evs[4]; del.Op != "delete" || del.Data != nil || !bytes.Contains(del.Key, []byte("b2")) || !del.Last {
			t.Errorf("the transaction's last event: %+v, want the delete of b2, without data, marked last", del)
		}
		equalStrings(t, "next transaction", describe(evs[5:]), []string{`insert {"id":"d4","v":4}`, `insert {"id":"e5","v":5} !`})
		for i, e := range evs {
			if e.Collection != "items" {
				t.Errorf("event %d: collection %q", i, e.Collection)
			}
			if e.Op != "delete" && !bytes.Contains(e.Key, []byte(e.Data[7:9])) {
				t.Errorf("event %d: key %q does not hold the primary key of %s", i, e.Key, e.Data)
			}
			if want := i < 5; (e.TxID == evs[0].TxID) != want {
				t.Errorf("event %d: tx_id %s, first transaction's %s", i, e.TxID, evs[0].TxID)
			}
			if want := i == 4 || i == 6; e.Last != want {
				t.Errorf("event %d: last %v, want %v", i, e.Last, want)
			}
			for j := range i {
				if evs[j].Position == e.Position {
					t.Errorf("events %d and %d share position %s", j, i, e.Position)
				}
			}
		}
	})
}

// A stream starts at "now": nothing committed before it, everything
// after; other collections' changes and aborted transactions never show.
func TestEventsStartNowAndSkipTheRest(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		c.insert(t, "db1", "items", `{"id":"before","v":0}`)
		ls := c.openStream(t, eventsPath("db1", "items"), `{"collection":"ignored","options":{}}`)

		c.insert(t, "db1", "other", `{"id":"elsewhere","v":0}`)
		rolled := c.begin(t, "db1")
		rolled.ok(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":"rolledback","v":0}]}`)
		if r := rolled.rollback(t); r.status != 200 {
			t.Fatalf("rollback: %s", r)
		}
		// A transaction that fails whole: the second document is a duplicate.
		wantError(t, c.do(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":"x","v":0},{"id":"before","v":0}]}`),
			409, "ALREADY_EXISTS", `duplicate key value, violates key constraint: key {"id":"before"} exists already`)
		// A transaction that commits nothing of items.
		failed := c.begin(t, "db1")
		failed.ok(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":"aborted","v":0}]}`)
		c.insert(t, "db1", "items", `{"id":"conflict","v":0}`)
		failed.ok(t, "POST", docPath("db1", "items", "read"), `{"filter":{"id":"conflict"}}`)
		c.ok(t, "PUT", docPath("db1", "items", "update"), `{"filter":{"id":"conflict"},"fields":{"$set":{"v":1}}}`)
		failed.ok(t, "PUT", docPath("db1", "items", "update"), `{"filter":{"id":"conflict"},"fields":{"$set":{"v":2}}}`)
		if r := failed.commit(t); r.status != 409 {
			t.Fatalf("commit of a conflicting transaction: %s, want 409", r)
		}
		c.insert(t, "db1", "items", `{"id":"after","v":0}`)

		equalStrings(t, "events", describe(nextEvents(t, ls, 3)), []string{
			`insert {"id":"conflict","v":0} !`, `update {"id":"conflict","v":1} !`, `insert {"id":"after","v":0} !`,
		})
	})
}

// Events come in commit order under concurrent writers. Each writer
// increments one counter in a read-modify-write transaction; the
// transactions are serializable, so the commit order is the order of the
// values written, and the events must carry 1, 2, 3, ... in sequence.
func TestEventsInCommitOrder(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		c.insert(t, "db1", "items", `{"id":"counter","v":0}`)
		ls := c.openStream(t, eventsPath("db1", "items"), `{}`)
		const writers, increments = 6, 10
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done := 0; done < increments; {
					ok, err := increment(c)
					if err != nil {
						errs <- err
						return
					}
					if ok {
						done++
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for want := 1; want <= writers*increments; want++ {
			e := ls.next(t)
			if got := fmt.Sprintf(`{"id":"counter","v":%d}`, want); e.Op != "update" || string(e.Data) != got || !e.Last {
				t.Fatalf("event %d: %s, want update %s", want, e, got)
			}
		}
	})
}

// increment adds one to the counter in a transaction; false if it
// conflicted and must be tried again.
func increment(c *client) (bool, error) {
	tx := c.beginOn("db1")
	if tx == nil {
		return false, fmt.Errorf("begin failed")
	}
	r, err := tx.send("POST", docPath("db1", "items", "read"), `{"filter":{"id":"counter"}}`)
	if err != nil || r.status != 200 {
		return false, fmt.Errorf("read in tx: %v %v", r, err)
	}
	var chunk struct {
		Result struct {
			Data struct{ V int } `json:"data"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.body, &chunk); err != nil {
		return false, fmt.Errorf("read %s: %v", r.body, err)
	}
	body := fmt.Sprintf(`{"filter":{"id":"counter"},"fields":{"$set":{"v":%d}}}`, chunk.Result.Data.V+1)
	if r, err := tx.send("PUT", docPath("db1", "items", "update"), body); err != nil || r.status != 200 {
		tx.send("POST", dbPath("db1", "transactions/rollback"), "")
		if err == nil && r.status == 409 {
			return false, nil
		}
		return false, fmt.Errorf("update in tx: %v %v", r, err)
	}
	r, err = tx.send("POST", dbPath("db1", "transactions/commit"), "")
	switch {
	case err != nil:
		return false, err
	case r.status == 409:
		return false, nil
	case r.status != 200:
		return false, fmt.Errorf("commit: %s", r)
	}
	return true, nil
}

// beginOn begins a transaction without a testing.T, for goroutines; nil if
// it failed.
func (c *client) beginOn(db string) *txClient {
	r, err := c.send("POST", dbPath(db, "transactions/begin"), "")
	if err != nil || r.status != 200 {
		return nil
	}
	var body struct {
		TxCtx struct{ ID, Origin string } `json:"tx_ctx"`
	}
	if json.Unmarshal(r.body, &body) != nil {
		return nil
	}
	return &txClient{c: c, db: db, id: body.TxCtx.ID, origin: body.TxCtx.Origin}
}

// A stream resumed from any event's position, after a restart of the
// server, continues right after that event: nothing lost, nothing
// repeated, whether the position is in the middle of a transaction or at
// its end, and whether the events after it were written before or after
// the restart.
func TestEventsResumeAfterRestart(t *testing.T) {
	s := pebbleServer(t, t.TempDir(), node.DefaultConfig())
	c := s.client
	withItems(t, c)
	ls := c.openStream(t, eventsPath("db1", "items"), `{}`)
	c.insert(t, "db1", "items", `{"id":"a","v":1}`, `{"id":"b","v":2}`, `{"id":"c","v":3}`)
	c.insert(t, "db1", "items", `{"id":"d","v":4}`)
	before := nextEvents(t, ls, 4)

	s.restart(t)
	// The stream of the stopped server ended with an error line saying so.
	if rest := ls.end(t); len(rest) != 1 || streamError(t, rest[0]).Code != "UNAVAILABLE" {
		t.Errorf("the stream at shutdown ended with %q, want one UNAVAILABLE error line", rest)
	}
	c = s.client
	c.insert(t, "db1", "items", `{"id":"e","v":5}`)
	c.ok(t, "DELETE", docPath("db1", "items", "delete"), `{"filter":{"id":"a"}}`)
	all := append(describe(before), `insert {"id":"e","v":5} !`, `delete `+string(before[0].Key)+` !`)

	for i, from := range before {
		ls := c.openStream(t, eventsPath("db1", "items"), startAfter(from.Position))
		got := describe(nextEvents(t, ls, len(all)-i-1))
		equalStrings(t, fmt.Sprintf("resumed after event %d (%s)", i, from), got, all[i+1:])
		ls.close()
	}
	// A new stream starts at now, after the restart too.
	ls = c.openStream(t, eventsPath("db1", "items"), `{}`)
	c.insert(t, "db1", "items", `{"id":"f","v":6}`)
	if e := ls.next(t); e.String() != `insert {"id":"f","v":6} !` {
		t.Errorf("new stream after the restart: %s", e)
	}
}

// A position the log no longer holds is refused before the stream starts,
// with a message that says why; so is one that is not a position at all,
// or one ahead of the log (from another data directory).
func TestEventsOutOfRange(t *testing.T) {
	s := pebbleServer(t, t.TempDir(), node.DefaultConfig())
	c := s.client
	withItems(t, c)
	ls := c.openStream(t, eventsPath("db1", "items"), `{}`)
	c.insert(t, "db1", "items", `{"id":"a","v":1}`)
	c.insert(t, "db1", "items", `{"id":"b","v":2}`)
	c.insert(t, "db1", "items", `{"id":"c","v":3}`)
	old, justKept, kept := ls.next(t).Position, ls.next(t).Position, ls.next(t)
	ls.close()
	cur, err := streams.ParseCursor("position", kept.Position)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.store.TrimLog(t.Context(), cur.Pos); err != nil {
		t.Fatal(err)
	}
	msg := wantError(t, c.do(t, "POST", eventsPath("db1", "items"), startAfter(old)), 400, "OUT_OF_RANGE", anyMessage)
	if !strings.Contains(msg, "older than the oldest change the log still keeps") {
		t.Errorf("message %q does not say the position is too old", msg)
	}
	ahead := streams.After(cur.Pos + 1000).String()
	wantError(t, c.do(t, "POST", eventsPath("db1", "items"), startAfter(ahead)), 400, "OUT_OF_RANGE", anyMessage)
	wantError(t, c.do(t, "POST", eventsPath("db1", "items"), startAfter("nonsense")), 400, "INVALID_ARGUMENT",
		"start_after 'nonsense' is not a position this server gave out")
	// The position just before the oldest kept event still works.
	ls = c.openStream(t, eventsPath("db1", "items"), startAfter(justKept))
	if e := ls.next(t); e.Position != kept.Position {
		t.Errorf("first event after the trim point: %s, want %s", e, kept)
	}
}

// A stream follows its collection by name: it goes on across a drop and a
// re-creation, and sees nothing of the dropped incarnation's data.
func TestEventsAcrossDropAndCreate(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		ls := c.openStream(t, eventsPath("db1", "items"), `{}`)
		c.insert(t, "db1", "items", `{"id":"a","v":1}`)
		c.ok(t, "DELETE", collPath("db1", "items", "drop"), "")
		c.createColl(t, "db1", "items", itemsSchema)
		c.insert(t, "db1", "items", `{"id":"a","v":2}`)
		c.ok(t, "DELETE", dbPath("db1", "drop"), "")
		withItems(t, c)
		c.insert(t, "db1", "items", `{"id":"a","v":3}`)
		equalStrings(t, "events", describe(nextEvents(t, ls, 3)), []string{
			`insert {"id":"a","v":1} !`, `insert {"id":"a","v":2} !`, `insert {"id":"a","v":3} !`,
		})
	})
}

func TestEventsRefused(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		c.createColl(t, "db1", "msgs", messagesSchema)
		for _, tc := range []struct {
			name, path, body string
			status           int
			code, message    string
		}{
			{"missing database", eventsPath("nodb", "items"), `{}`, 404, "NOT_FOUND", "database doesn't exist 'nodb'"},
			{"missing collection", eventsPath("db1", "nothing"), `{}`, 404, "NOT_FOUND", "collection doesn't exist 'nothing'"},
			{"messages collection", eventsPath("db1", "msgs"), `{}`, 400, "INVALID_ARGUMENT", "events is only supported on collection type of 'documents'"},
			{"bad collection name", eventsPath("db1", "1x"), `{}`, 400, "INVALID_ARGUMENT", "invalid collection name '1x': " + nameRule},
			{"malformed body", eventsPath("db1", "items"), `{"options":`, 400, "INVALID_ARGUMENT", anyMessage},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, c.do(t, "POST", tc.path, tc.body), tc.status, tc.code, tc.message)
			})
		}
		wantError(t, c.do(t, "GET", eventsPath("db1", "items"), ""), 405, "METHOD_NOT_ALLOWED", anyMessage)
	})
}

// A consumer that stops reading is ended once the configured buffer is
// full, with an error line after everything it was sent: no event is
// skipped, and resuming from the last one it got gives the rest. The write
// deadline is lifted: it would cut the connection mid-line if the inserts
// below outlast it (they took over 30 s under the race detector on a busy
// machine), and TestStalledReaderIsCutOff tests it on its own.
func TestEventsSlowConsumer(t *testing.T) {
	cfg := node.DefaultConfigWith(func(nc *node.Config) {
		nc.Streams.MaxPending = 64 << 10
		nc.WriteTimeout = 10 * time.Minute
	})
	eachStreamBackend(t, cfg, func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		c.createColl(t, "db1", "big", `{"title":"big","primary_key":["id"],"properties":{"id":{"type":"integer"},"pad":{"type":"string"}}}`)
		res, cancel := c.startStream(t, eventsPath("db1", "big"), `{}`, 64<<10)
		defer cancel()
		defer res.Body.Close()
		// Nothing reads the stream while these go in: the server's writes
		// block once the connection's buffers are full, and then its queue
		// fills. Write enough to fill both, twice over.
		const docSize = 256 << 10
		pad := strings.Repeat("x", docSize)
		n := 2 * (sendBufferMax() + 1<<20 + 64<<10) / docSize
		for i := range n {
			c.ok(t, "POST", docPath("db1", "big", "insert"), fmt.Sprintf(`{"documents":[{"id":%d,"pad":"%s"}]}`, i, pad))
		}
		var ids []int
		var last string
		sc := streamLines(t, res.Body)
		var end string
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, `{"error"`) {
				end = line
				continue
			}
			if end != "" {
				t.Fatalf("a line after the error line: %.100s", line)
			}
			e := parseEvent(t, line)
			var doc struct{ ID int }
			json.Unmarshal(e.Data, &doc)
			ids = append(ids, doc.ID)
			last = e.Position
		}
		if end == "" {
			t.Fatalf("the stream did not end with an error line (%d events)", len(ids))
		}
		if e := streamError(t, end); e.Code != "RESOURCE_EXHAUSTED" || !strings.Contains(e.Message, "resume from the position of the last item received") {
			t.Errorf("error line %+v", e)
		}
		if len(ids) >= n {
			t.Fatalf("got all %d events before the error", len(ids))
		}
		ls := c.openStream(t, eventsPath("db1", "big"), startAfter(last))
		for len(ids) < n {
			var doc struct{ ID int }
			json.Unmarshal(ls.next(t).Data, &doc)
			ids = append(ids, doc.ID)
		}
		for i, id := range ids {
			if id != i {
				t.Fatalf("event %d is document %d: a gap or a repeat", i, id)
			}
		}
	})
}
