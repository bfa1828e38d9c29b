package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/streams"
)

// The limits on what streams hold on a node: how many may be open, and
// the bytes queued for all of them together.

// eventually polls cond, failing after a deadline.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A stream beyond --max-streams is refused before it starts, with 429
// RESOURCE_EXHAUSTED naming the limit and the setting; events and
// subscribe count together, and closing one makes room for another.
func TestMaxStreams(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfigWith(func(nc *node.Config) {
		nc.Streams.MaxStreams = 3
	}), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		c.createColl(t, "db1", "msgs", messagesSchema)
		first := c.openStream(t, eventsPath("db1", "items"), `{}`)
		second := c.openStream(t, eventsPath("db1", "items"), `{}`)
		third := c.openStream(t, msgPath("db1", "msgs", "subscribe"), `{}`)
		for _, path := range []string{eventsPath("db1", "items"), msgPath("db1", "msgs", "subscribe")} {
			msg := wantError(t, c.do(t, "POST", path, `{}`), http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", anyMessage)
			if !strings.Contains(msg, "at most 3 ") || !strings.Contains(msg, "--max-streams") {
				t.Errorf("refused stream: message %q does not name the limit and its setting", msg)
			}
		}
		first.close()
		eventually(t, "the closed stream to give its place back", func() bool { return s.node.Stats().Streams.Open == 2 })
		fourth := c.openStream(t, eventsPath("db1", "items"), `{}`)
		wantError(t, c.do(t, "POST", eventsPath("db1", "items"), `{}`), http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", anyMessage)
		c.insert(t, "db1", "items", `{"id":"a","v":1}`)
		for _, ls := range []*liveStream{second, fourth} {
			if e := ls.next(t); e.String() != `insert {"id":"a","v":1} !` {
				t.Errorf("an open stream got %s", e)
			}
		}
		c.publish(t, `{"n":1}`)
		if m := third.message(t); !strings.Contains(string(m.Message), `"n":1`) {
			t.Errorf("the subscribe stream got %s", m.Message)
		}
	})
}

// Streams that do not read, on a node with a small --stream-buffer-total-bytes,
// while a writer commits large documents: the bytes queued for all of them
// never pass the budget, the streams furthest behind are ended with
// RESOURCE_EXHAUSTED after what they were sent (nothing skipped), and the
// stream that reads gets everything.
func TestStreamBufferTotal(t *testing.T) {
	// Four and a half documents of 256 KiB: the four streams may each hold
	// one at once. With exactly four, the budget overflowed when each held
	// the newest document, and the stream that reads (its last write out,
	// its consumer not yet back for more) tied with a stalled one: either
	// could be ended. Past four and a half, a stalled stream holds two.
	const budget = 1<<20 + 128<<10
	// The stalled streams must not be cut off for their stalled writes
	// while the documents go in, however slow the machine.
	cfg := node.DefaultConfigWith(func(nc *node.Config) {
		nc.Streams.MaxPendingTotal = budget
		nc.WriteTimeout = 10 * time.Minute
	})
	eachStreamBackend(t, cfg, func(t *testing.T, s *streamServer) {
		c := s.client
		c.createDB(t, "db1")
		c.createColl(t, "db1", "big", `{"title":"big","primary_key":["id"],"properties":{"id":{"type":"integer"},"pad":{"type":"string"}}}`)
		var stalled []*http.Response
		for range 3 {
			res, cancel := c.startStream(t, eventsPath("db1", "big"), `{}`, 64<<10)
			t.Cleanup(cancel)
			t.Cleanup(func() { res.Body.Close() })
			stalled = append(stalled, res)
		}
		reader := c.openStream(t, eventsPath("db1", "big"), `{}`)

		var over atomic.Int64
		done := make(chan struct{})
		watched := make(chan struct{})
		stopWatching := sync.OnceFunc(func() {
			close(done)
			<-watched
		})
		t.Cleanup(stopWatching) // before the node stops
		n := s.node
		go func() {
			defer close(watched)
			for {
				if p := n.Stats().Streams.PendingBytes; p > budget {
					over.Store(p)
				}
				select {
				case <-done:
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
		}()
		// Enough to fill each stalled connection's buffers, then the budget,
		// twice over.
		const docSize = 256 << 10
		pad := strings.Repeat("x", docSize)
		docs := 2 * (sendBufferMax() + 64<<10 + budget) / docSize
		for i := range docs {
			c.ok(t, "POST", docPath("db1", "big", "insert"), fmt.Sprintf(`{"documents":[{"id":%d,"pad":"%s"}]}`, i, pad))
			if id := docID(t, reader.next(t)); id != i {
				t.Fatalf("the reading stream's event %d is document %d", i, id)
			}
		}
		stopWatching()
		if p := over.Load(); p > 0 {
			t.Errorf("%d bytes queued for the streams, over the budget of %d", p, budget)
		}

		for i, res := range stalled {
			var ids []int
			var end string
			sc := streamLines(t, res.Body)
			for sc.Scan() {
				line := sc.Text()
				if end != "" {
					t.Fatalf("stalled stream %d: a line after the error line: %.100s", i, line)
				}
				if strings.HasPrefix(line, `{"error"`) {
					end = line
					continue
				}
				ids = append(ids, docID(t, parseEvent(t, line)))
			}
			if end == "" {
				t.Fatalf("stalled stream %d did not end with an error line (%d events)", i, len(ids))
			}
			if e := streamError(t, end); e.Code != "RESOURCE_EXHAUSTED" || !strings.Contains(e.Message, "--stream-buffer-total-bytes") ||
				!strings.Contains(e.Message, "resume from the position of the last item received") {
				t.Errorf("stalled stream %d: error line %+v", i, e)
			}
			for j, id := range ids {
				if id != j {
					t.Fatalf("stalled stream %d: event %d is document %d, a gap or a repeat", i, j, id)
				}
			}
			if len(ids) >= docs {
				t.Errorf("stalled stream %d got all %d events before its error", i, docs)
			}
		}
		reader.close()
		eventually(t, "every stream to be released", func() bool { return s.node.Stats().Streams == streams.Stats{} })
	})
}

func docID(t *testing.T, e event) int {
	t.Helper()
	var doc struct{ ID int }
	if err := json.Unmarshal(e.Data, &doc); err != nil {
		t.Fatalf("event data %.100s: %v", e.Data, err)
	}
	return doc.ID
}

// fillStalled inserts documents into db1.big until a stream that has not
// read anything since the first is blocked in a write: more than its
// connection's buffers hold.
func fillStalled(t *testing.T, c *client, from int) int {
	t.Helper()
	const docSize = 256 << 10
	pad := strings.Repeat("x", docSize)
	n := (sendBufferMax()+64<<10)/docSize + 4
	for i := range n {
		c.ok(t, "POST", docPath("db1", "big", "insert"), fmt.Sprintf(`{"documents":[{"id":%d,"pad":"%s"}]}`, from+i, pad))
	}
	return from + n
}

// streamWriteTimeout cuts off the stalled streams of these tests. It bounds
// the writes of every response too, an insert's included: at one second a
// loaded machine (the race detector, PostgreSQL, 44 streams to feed, the
// search indexer) ran past it and the insert's connection was closed.
const streamWriteTimeout = 3 * time.Second

const bigSchema = `{"title":"big","primary_key":["id"],"properties":{"id":{"type":"integer"},"pad":{"type":"string"}}}`

// A client that stays connected but reads nothing is cut off once a write
// to it has waited the stream write timeout, and its stream is released.
func TestStalledStreamCutOff(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfigWith(func(nc *node.Config) {
		nc.WriteTimeout = streamWriteTimeout
	}), func(t *testing.T, s *streamServer) {
		c := s.client
		c.createDB(t, "db1")
		c.createColl(t, "db1", "big", bigSchema)
		res, cancel := c.startStream(t, eventsPath("db1", "big"), `{}`, 64<<10)
		defer cancel()
		defer res.Body.Close()
		fillStalled(t, c, 0)
		eventually(t, "the stalled stream to be cut off", func() bool { return s.node.Stats().Streams.Open == 0 })
		if st := s.node.Stats(); st.Streams.PendingBytes != 0 {
			t.Errorf("%+v after the cut-off, want nothing queued", st)
		}
	})
}

// Fifty streams opened and closed, some by their clients, some stalled
// (connected, reading nothing) and cut off, some live and some catching
// up: afterwards the node holds nothing for them: no subscription, no
// queued byte, no reader of the change log.
func TestStreamsReleased(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfigWith(func(nc *node.Config) {
		nc.WriteTimeout = streamWriteTimeout
	}), func(t *testing.T, s *streamServer) {
		c := s.client
		c.createDB(t, "db1")
		c.createColl(t, "db1", "big", bigSchema)
		fromStart := startAfter(streams.After(0).String())
		written := fillStalled(t, c, 0)
		var closed []*liveStream
		for i := range 22 {
			body := `{}`
			if i%2 == 0 {
				body = fromStart
			}
			closed = append(closed, c.openStream(t, eventsPath("db1", "big"), body))
		}
		for i := range 6 {
			body := `{}`
			if i%2 == 0 {
				body = fromStart
			}
			res, cancel := c.startStream(t, eventsPath("db1", "big"), body, 64<<10)
			t.Cleanup(cancel)
			t.Cleanup(func() { res.Body.Close() })
		}
		for range 22 {
			closed = append(closed, c.openStream(t, eventsPath("db1", "big"), `{}`))
		}
		// Some stalled ones may be cut off already.
		t.Logf("50 streams opened: %+v", s.node.Stats())
		for i, ls := range closed {
			if i%4 == 0 {
				ls.close() // before anything was sent
			}
		}
		written = fillStalled(t, c, written)
		for _, ls := range closed {
			ls.close()
		}
		eventually(t, "every stream to be released", func() bool { return s.node.Stats().Streams == streams.Stats{} })
		c.insert(t, "db1", "big", fmt.Sprintf(`{"id":%d}`, written)) // wakes the hub, which lets its reader go
		eventually(t, "the change log's readers to be closed", func() bool { return s.node.Stats().LogReaders == 0 })
	})
}
