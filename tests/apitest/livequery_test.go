package apitest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/foliodb/folio/internal/node"
)

// Live queries (issue 40, part 3): an events stream narrowed by a filter.

const liveFilter = `{"v":{"$gte":50}}`

// liveID finds a document's id (doc-NNN) in its storage key, which holds
// the primary key's value as it is.
var liveID = regexp.MustCompile(`doc-[0-9]{3}`)

// liveView is what a client keeps of a filtered stream: the documents the
// filter matches, by id, built from what the stream delivers. Every change
// it gets must concern its view: a document delivered as it is must match
// the filter, and one delivered as leaving it (or deleted) must be in the
// view. Anything else is a change the stream should not have sent.
type liveView map[string]string

func (v liveView) apply(t *testing.T, ev event) {
	t.Helper()
	id := liveID.FindString(string(ev.Key))
	if id == "" {
		t.Fatalf("event %s: no id in key %q", ev, ev.Key)
	}
	switch {
	case ev.Op == "delete" || ev.LeftFilter:
		if _, ok := v[id]; !ok {
			t.Errorf("event %s (left_filter %v) about %s, which the view does not hold: a change the filter should have skipped", ev, ev.LeftFilter, id)
		}
		if ev.Op == "delete" && ev.LeftFilter {
			t.Errorf("delete %s marked left_filter", id)
		}
		if ev.LeftFilter && matchesLive(t, ev.Data) {
			t.Errorf("event %s marked left_filter, but its document matches", ev)
		}
		delete(v, id)
	default:
		if !matchesLive(t, ev.Data) {
			t.Errorf("event %s delivered as it is, but its document does not match %s", ev, liveFilter)
		}
		v[id] = string(ev.Data)
	}
}

func matchesLive(t *testing.T, data json.RawMessage) bool {
	t.Helper()
	var d struct{ V int }
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("document %s: %v", data, err)
	}
	return d.V >= 50
}

func (v liveView) sorted() []string {
	out := make([]string, 0, len(v))
	for _, d := range v {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// readView rereads what the filter matches now.
func readView(t *testing.T, c *client) []string {
	t.Helper()
	got := c.docs(t, "db1", "items", `{"filter":`+liveFilter+`}`)
	sort.Strings(got)
	return got
}

// A filtered stream with writers moving documents in and out of its filter
// concurrently (updates, replaces, deletes, inserts, some in multi-document
// transactions): the changes it delivers, applied to a client's view that
// started from a read, give exactly what a reread with the same filter
// gives once the writers stop, and each change it delivers concerns the
// view (none extra).
func TestFilteredEventsKeepAViewRight(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		const docs = 60
		var initial []string
		for i := range docs {
			if i%3 != 2 { // a third do not exist yet
				initial = append(initial, fmt.Sprintf(`{"id":"doc-%03d","v":%d}`, i, i*7%100))
			}
		}
		c.insert(t, "db1", "items", initial...)
		view := liveView{}
		for _, d := range readView(t, c) {
			view[liveID.FindString(d)] = d
		}
		ls := c.openStream(t, eventsPath("db1", "items"), `{"filter":`+liveFilter+`}`)

		const writers, each = 4, 40
		var wg sync.WaitGroup
		errs := make(chan string, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 40))
				for range each {
					id := fmt.Sprintf("doc-%03d", rng.IntN(docs))
					v := rng.IntN(100)
					var method, path, body string
					switch rng.IntN(5) {
					case 0, 1:
						method, path, body = "PUT", "update", fmt.Sprintf(`{"filter":{"id":%q},"fields":{"$set":{"v":%d}}}`, id, v)
					case 2:
						method, path, body = "PUT", "replace", fmt.Sprintf(`{"documents":[{"id":%q,"v":%d}]}`, id, v)
					case 3:
						method, path, body = "DELETE", "delete", fmt.Sprintf(`{"filter":{"id":%q}}`, id)
					case 4: // several documents at once, across the filter
						other := fmt.Sprintf("doc-%03d", rng.IntN(docs))
						method, path, body = "PUT", "update", fmt.Sprintf(`{"filter":{"$or":[{"id":%q},{"id":%q}]},"fields":{"$set":{"v":%d}}}`, id, other, v)
					}
					r, err := c.send(method, docPath("db1", "items", path), body)
					switch {
					case err != nil:
						errs <- err.Error()
					case r.status == 409: // a conflict between writers: retried by nobody, changes nothing
					case r.status != 200:
						errs <- fmt.Sprintf("%s %s: %s", path, body, r)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
		// The end marker matches, so the stream delivers it after
		// everything the writers committed.
		c.insert(t, "db1", "items", `{"id":"doc-999","v":99}`)
		delivered, left := 0, 0
		for {
			ev := ls.next(t)
			if strings.Contains(string(ev.Key), "doc-999") {
				break
			}
			delivered++
			if ev.LeftFilter {
				left++
			}
			view.apply(t, ev)
		}
		c.ok(t, "DELETE", docPath("db1", "items", "delete"), `{"filter":{"id":"doc-999"}}`)
		equalStrings(t, "the view built from the stream against a reread", view.sorted(), readView(t, c))
		if left == 0 || delivered == left {
			t.Errorf("%d changes delivered, %d of them leaving the filter: the writers should have moved documents both ways", delivered, left)
		}
		t.Logf("%d changes delivered, %d leaving the filter", delivered, left)
	})
}

// What a filtered stream sends for each kind of change, in one
// transaction: inserts in and out, updates moving in, out and staying
// out, a replace creating a document outside, deletes of a match and of
// another. A stream resumed from a position in the middle sends the
// matching changes after it, none twice, and what was committed since.
func TestFilteredEventsResume(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		c.insert(t, "db1", "items", `{"id":"doc-001","v":60}`, `{"id":"doc-002","v":10}`, `{"id":"doc-003","v":70}`, `{"id":"doc-004","v":20}`)
		ls := c.openStream(t, eventsPath("db1", "items"), `{"filter":`+liveFilter+`}`)

		tx := c.begin(t, "db1")
		tx.ok(t, "POST", docPath("db1", "items", "insert"), `{"documents":[{"id":"doc-010","v":90},{"id":"doc-011","v":5}]}`)
		tx.ok(t, "PUT", docPath("db1", "items", "update"), `{"filter":{"id":"doc-001"},"fields":{"$set":{"v":1}}}`)  // out
		tx.ok(t, "PUT", docPath("db1", "items", "update"), `{"filter":{"id":"doc-002"},"fields":{"$set":{"v":99}}}`) // in
		tx.ok(t, "PUT", docPath("db1", "items", "update"), `{"filter":{"id":"doc-004"},"fields":{"$set":{"v":30}}}`) // stays out
		tx.ok(t, "PUT", docPath("db1", "items", "replace"), `{"documents":[{"id":"doc-012","v":0}]}`)                // created outside
		tx.ok(t, "DELETE", docPath("db1", "items", "delete"), `{"filter":{"id":"doc-003"}}`)                         // a match
		tx.ok(t, "DELETE", docPath("db1", "items", "delete"), `{"filter":{"id":"doc-004"}}`)                         // another
		if r := tx.commit(t); r.status != 200 {
			t.Fatalf("commit: %s", r)
		}
		evs := nextEvents(t, ls, 4)
		got := make([]string, len(evs))
		for i, e := range evs {
			got[i] = fmt.Sprintf("%s %s %v %v", e.Op, liveID.FindString(string(e.Key)), e.LeftFilter, e.Last)
		}
		equalStrings(t, "filtered events", got, []string{
			"insert doc-010 false false", "update doc-001 true false", "update doc-002 false false", "delete doc-003 false true",
		})
		if string(evs[1].Data) != `{"id":"doc-001","v":1}` {
			t.Errorf("the change leaving the filter carries %s, want the document after it", evs[1].Data)
		}
		ls.close()

		// Committed while no stream is open: one in, one out.
		c.insert(t, "db1", "items", `{"id":"doc-020","v":55}`, `{"id":"doc-021","v":45}`)
		resumed := c.openStream(t, eventsPath("db1", "items"), `{"filter":`+liveFilter+`,"options":{"start_after":"`+evs[1].Position+`"}}`)
		again := nextEvents(t, resumed, 3)
		for i, want := range []string{"doc-002", "doc-003", "doc-020"} {
			if id := liveID.FindString(string(again[i].Key)); id != want {
				t.Errorf("resumed event %d about %s, want %s", i, id, want)
			}
		}
		if again[0].Position != evs[2].Position || again[1].Position != evs[3].Position {
			t.Errorf("resumed events at other positions than the first stream's: %v", again)
		}
		c.insert(t, "db1", "items", `{"id":"doc-030","v":3}`, `{"id":"doc-031","v":80}`)
		if e := resumed.next(t); liveID.FindString(string(e.Key)) != "doc-031" || !e.Last {
			t.Errorf("after the resumed changes: %s, want doc-031's insert, last", e)
		}
	})
}

// A filter the parser refuses fails the stream's request with the same
// 400 and message a read with it gets, before anything is streamed; so
// does an unknown member of an events or read request's options.
func TestFilteredEventsRefusals(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withItems(t, c)
		for _, f := range []string{`{"v":{"$bogus":1}}`, `{"v":{"$gt":"x"}}`, `{"nope":1}`, `[1]`} {
			ev := c.do(t, "POST", eventsPath("db1", "items"), `{"filter":`+f+`}`)
			rd := c.do(t, "POST", docPath("db1", "items", "read"), `{"filter":`+f+`}`)
			if ev.status != 400 || ev.status != rd.status {
				t.Errorf("events with filter %s: %s; read: %s", f, ev, rd)
				continue
			}
			e, _ := errorOf(t, ev)
			r, _ := errorOf(t, rd)
			if e != r {
				t.Errorf("filter %s: events says %+v, read %+v", f, e, r)
			}
		}
		for _, tc := range []struct{ path, body, want string }{
			{eventsPath("db1", "items"), `{"options":{"limitt":1}}`, "unknown option 'limitt'"},
			{eventsPath("db1", "items"), `{"filter":{},"options":{"start_afterr":"x"}}`, "unknown option 'start_afterr' (did you mean 'start_after'?)"},
			{docPath("db1", "items", "read"), `{"filter":{},"options":{"limitt":1}}`, "unknown option 'limitt' (did you mean 'limit'?)"},
		} {
			r := c.do(t, "POST", tc.path, tc.body)
			e, _ := errorOf(t, r)
			if r.status != 400 || !strings.HasPrefix(e.Message, tc.want) {
				t.Errorf("%s %s: %s, want 400 %q", tc.path, tc.body, r, tc.want)
			}
		}
		// A filter matching everything, and the collation, are taken.
		ls := c.openStream(t, eventsPath("db1", "items"), `{"filter":{"id":"DOC-001"},"options":{"collation":{"case":"ci"}}}`)
		c.insert(t, "db1", "items", `{"id":"doc-002","v":1}`, `{"id":"doc-001","v":1}`)
		if e := ls.next(t); liveID.FindString(string(e.Key)) != "doc-001" {
			t.Errorf("case-insensitive filter: %s", e)
		}
	})
}
