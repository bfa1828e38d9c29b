package apitest

import (
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/foliodb/folio/internal/node"
)

// Messages collections: publish, subscribe, read (reference §5 and §7).

const messagesSchema = `{"title":"msgs","collection_type":"messages","properties":{"kind":{"type":"string"},"n":{"type":"integer"},"text":{"type":"string"}}}`

func withMessages(t *testing.T, c *client) {
	t.Helper()
	c.createDB(t, "db1")
	c.createColl(t, "db1", "msgs", messagesSchema)
}

// publish publishes messages (JSON objects) and returns the response.
func (c *client) publish(t testing.TB, msgs ...string) map[string]any {
	t.Helper()
	return c.okObject(t, "POST", msgPath("db1", "msgs", "publish"), `{"messages":[`+strings.Join(msgs, ",")+`]}`)
}

// messages reads the next n messages of a subscribe stream.
func (ls *liveStream) messages(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = string(ls.message(t).Message)
	}
	return out
}

func TestPublishAndSubscribe(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withMessages(t, c)
		c.publish(t, `{"text":"before"}`)
		ls := c.openStream(t, msgPath("db1", "msgs", "subscribe"), `{"options":{"partitions":[0]}}`)
		res := c.publish(t, `{"kind":"a","n":1}`, `{"n":2,"kind":"b"}`)
		if str(t, res, "status") != "published" {
			t.Errorf("status %v", res["status"])
		}
		parseTime(t, str(t, obj(t, res, "metadata"), "created_at"))
		keys, _ := res["keys"].([]any)
		if len(keys) != 2 || keys[0] == keys[1] {
			t.Errorf("keys %v, want two distinct", keys)
		}
		c.ok(t, "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"text":"x \u00e9"}],"options":{"partition":0}}`)
		// Messages come back byte for byte, in publish order.
		equalStrings(t, "messages", ls.messages(t, 3), []string{`{"kind":"a","n":1}`, `{"n":2,"kind":"b"}`, `{"text":"x \u00e9"}`})
	})
}

// The messages of each publisher reach a subscriber in the order it
// published them, however many publish at once, and a read returns them in
// that order too.
func TestPublishOrderUnderConcurrency(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withMessages(t, c)
		ls := c.openStream(t, msgPath("db1", "msgs", "subscribe"), `{}`)
		const publishers, each = 4, 15
		var wg sync.WaitGroup
		errs := make(chan error, publishers)
		for p := range publishers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range each {
					// Two messages per request: their order within the
					// request is kept too.
					body := fmt.Sprintf(`{"messages":[{"kind":"p%d","n":%d},{"kind":"p%d","n":%d}]}`, p, 2*n, p, 2*n+1)
					if r, err := c.send("POST", msgPath("db1", "msgs", "publish"), body); err != nil || r.status != 200 {
						errs <- fmt.Errorf("publish: %v %v", r, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		check := func(what string, msgs []string) {
			t.Helper()
			next := map[string]int{}
			for _, m := range msgs {
				var kind string
				var n int
				if _, err := fmt.Sscanf(m, `{"kind":"%2s","n":%d}`, &kind, &n); err != nil {
					t.Fatalf("%s: message %s: %v", what, m, err)
				}
				if n != next[kind] {
					t.Fatalf("%s: %s's message %d came when %d was due", what, kind, n, next[kind])
				}
				next[kind]++
			}
			if len(msgs) != 2*publishers*each {
				t.Errorf("%s: %d messages, want %d", what, len(msgs), 2*publishers*each)
			}
		}
		check("subscribe", ls.messages(t, 2*publishers*each))
		check("read", c.docs(t, "db1", "msgs", `{"filter":{}}`))
	})
}

// A subscription gets the messages its filter (read-filter syntax) takes,
// and no others.
func TestSubscribeFilter(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withMessages(t, c)
		all := []string{`{"kind":"a","n":1}`, `{"kind":"b","n":2}`, `{"text":"no kind"}`, `{"kind":"a","n":3}`, `{"kind":"B","n":9}`}
		// Every filter takes the sentinel, published last: a message it
		// should not have taken would come before it.
		const sentinel = `{"kind":"a","n":100}`
		for _, tc := range []struct {
			name, body string
			want       []int // indexes into all
		}{
			{"equality", `{"filter":{"kind":"a"}}`, []int{0, 3}},
			{"range", `{"filter":{"n":{"$gte":2}}}`, []int{1, 3, 4}},
			{"or", `{"filter":{"$or":[{"kind":"a"},{"n":9}]}}`, []int{0, 3, 4}},
			{"and", `{"filter":{"$and":[{"n":{"$gt":1}},{"n":{"$lte":100}}],"kind":{"$lt":"b"}}}`, []int{3, 4}},
			{"collation", `{"filter":{"kind":"A"},"options":{"collation":{"case":"ci"}}}`, []int{0, 3}},
			{"field collation", `{"filter":{"$or":[{"kind":{"$eq":"B","collation":{"case":"ci"}}},{"n":100}]}}`, []int{1, 4}},
			{"empty", `{"filter":{}}`, []int{0, 1, 2, 3, 4}},
			{"none given", `{}`, []int{0, 1, 2, 3, 4}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ls := c.openStream(t, msgPath("db1", "msgs", "subscribe"), tc.body)
				c.publish(t, all...)
				c.publish(t, sentinel)
				var want []string
				for _, i := range tc.want {
					want = append(want, all[i])
				}
				want = append(want, sentinel)
				equalStrings(t, "messages", ls.messages(t, len(want)), want)
			})
		}
	})
}

// A publish is all or nothing, and inside a transaction it is seen when
// the transaction commits, and never if it rolls back.
func TestPublishAtomicAndTransactional(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withMessages(t, c)
		ls := c.openStream(t, msgPath("db1", "msgs", "subscribe"), `{}`)
		wantError(t, c.do(t, "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"n":1},{"n":"two"}]}`),
			400, "INVALID_ARGUMENT", "json schema validation failed for field 'n' reason 'expected integer or null, but got string'")
		wantError(t, c.do(t, "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"n":1},{"extra":1}]}`),
			400, "INVALID_ARGUMENT", anyMessage)

		tx := c.begin(t, "db1")
		tx.ok(t, "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"text":"in tx 1"},{"text":"in tx 2"}]}`)
		c.publish(t, `{"text":"outside"}`)
		if r := tx.commit(t); r.status != 200 {
			t.Fatalf("commit: %s", r)
		}
		rolled := c.begin(t, "db1")
		rolled.ok(t, "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"text":"rolled back"}]}`)
		if r := rolled.rollback(t); r.status != 200 {
			t.Fatalf("rollback: %s", r)
		}
		c.publish(t, `{"text":"last"}`)
		equalStrings(t, "subscribed", ls.messages(t, 4), []string{`{"text":"outside"}`, `{"text":"in tx 1"}`, `{"text":"in tx 2"}`, `{"text":"last"}`})
		if got := c.docs(t, "db1", "msgs", `{"filter":{}}`); len(got) != 4 || strings.Contains(strings.Join(got, ""), "rolled back") {
			t.Errorf("stored: %q", got)
		}
	})
}

// A subscription resumed from a message's position continues right after
// it, across a restart of the server.
func TestSubscribeResume(t *testing.T) {
	s := pebbleServer(t, t.TempDir(), node.DefaultConfig())
	c := s.client
	withMessages(t, c)
	ls := c.openStream(t, msgPath("db1", "msgs", "subscribe"), `{"filter":{"kind":"a"}}`)
	c.publish(t, `{"kind":"a","n":1}`, `{"kind":"b","n":2}`, `{"kind":"a","n":3}`)
	first := ls.message(t)
	ls.close()
	s.restart(t)
	c = s.client
	c.publish(t, `{"kind":"a","n":4}`, `{"kind":"b","n":5}`)
	ls = c.openStream(t, msgPath("db1", "msgs", "subscribe"), `{"filter":{"kind":"a"},"options":{"start_after":"`+first.Position+`"}}`)
	equalStrings(t, "resumed", ls.messages(t, 2), []string{`{"kind":"a","n":3}`, `{"kind":"a","n":4}`})
}

func TestMessagesRead(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withMessages(t, c)
		var created []string
		for i := range 5 {
			res := c.publish(t, fmt.Sprintf(`{"kind":"%c","n":%d,"text":"t%d"}`, 'a'+i%2, i, i))
			created = append(created, str(t, obj(t, res, "metadata"), "created_at"))
			keys, _ := res["keys"].([]any)
			if len(keys) != 1 {
				t.Fatalf("keys %v, want one", res["keys"])
			}
			if key, err := base64.StdEncoding.DecodeString(fmt.Sprint(keys[0])); err != nil || len(key) == 0 {
				t.Errorf("key %v is not base64: %v", keys[0], err)
			}
		}
		items := parseStream(t, c.ok(t, "POST", msgPath("db1", "msgs", "read"), `{"filter":{}}`))
		if len(items) != 5 {
			t.Fatalf("read %d messages, want 5", len(items))
		}
		for i, it := range items {
			if want := fmt.Sprintf(`{"kind":"%c","n":%d,"text":"t%d"}`, 'a'+i%2, i, i); string(it.data) != want {
				t.Errorf("message %d: %s, want %s", i, it.data, want)
			}
			if it.createdAt != created[i] {
				t.Errorf("message %d: created_at %s, publish said %s", i, it.createdAt, created[i])
			}
		}
		for _, tc := range []struct{ name, path, body, want string }{
			{"filter", msgPath("db1", "msgs", "read"), `{"filter":{"kind":"b"}}`, `{"kind":"b","n":1,"text":"t1"} {"kind":"b","n":3,"text":"t3"}`},
			{"limit and skip", msgPath("db1", "msgs", "read"), `{"filter":{},"options":{"skip":1,"limit":2}}`, `{"kind":"b","n":1,"text":"t1"} {"kind":"a","n":2,"text":"t2"}`},
			{"resume", msgPath("db1", "msgs", "read"), `{"filter":{},"options":{"offset":"` + items[3].resumeToken + `"}}`, `{"kind":"a","n":4,"text":"t4"}`},
			{"fields", msgPath("db1", "msgs", "read"), `{"filter":{"n":0},"fields":{"text":1}}`, `{"text":"t0"}`},
			{"the documents path", docPath("db1", "msgs", "read"), `{"filter":{"n":{"$gt":3}}}`, `{"kind":"a","n":4,"text":"t4"}`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var got []string
				for _, it := range parseStream(t, c.ok(t, "POST", tc.path, tc.body)) {
					got = append(got, string(it.data))
				}
				equalStrings(t, "read", got, strings.Split(tc.want, " "))
			})
		}
		wantError(t, c.do(t, "POST", msgPath("db1", "msgs", "read"), `{"filter":{},"sort":[{"n":"$desc"}]}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "POST", msgPath("db1", "msgs", "read"), `{}`), 400, "INVALID_ARGUMENT", "filter is a required field")

		// The collection's size counts its messages, and a drop clears them.
		if size := intOf(t, c.okObject(t, "POST", collPath("db1", "msgs", "describe"), "")["size"]); size <= 0 {
			t.Errorf("size of a collection of 5 messages: %d", size)
		}
		c.ok(t, "DELETE", collPath("db1", "msgs", "drop"), "")
		c.createColl(t, "db1", "msgs", messagesSchema)
		if got := c.all(t, "db1", "msgs"); len(got) != 0 {
			t.Errorf("messages after drop and create: %q", got)
		}
		// Documents through the messages path.
		c.createColl(t, "db1", "items", itemsSchema)
		c.insert(t, "db1", "items", `{"id":"a","v":1}`)
		equalStrings(t, "documents through messages/read", c.docsAt(t, msgPath("db1", "items", "read"), `{"filter":{}}`), []string{`{"id":"a","v":1}`})
	})
}

func (c *client) docsAt(t *testing.T, path, body string) []string {
	t.Helper()
	var out []string
	for _, it := range parseStream(t, c.ok(t, "POST", path, body)) {
		out = append(out, string(it.data))
	}
	return out
}

// Message operations on documents collections, and document operations on
// messages collections, are refused with the original's messages; so are
// partitions other than 0.
func TestMessagesRefused(t *testing.T) {
	eachStreamBackend(t, node.DefaultConfig(), func(t *testing.T, s *streamServer) {
		c := s.client
		withMessages(t, c)
		c.createColl(t, "db1", "items", itemsSchema)
		for _, tc := range []struct {
			name, method, path, body string
			status                   int
			code, message            string
		}{
			{"publish on documents", "POST", msgPath("db1", "items", "publish"), `{"messages":[{"id":"a"}]}`, 400, "INVALID_ARGUMENT", "publish is only supported on collection type of 'messages'"},
			{"subscribe on documents", "POST", msgPath("db1", "items", "subscribe"), `{}`, 400, "INVALID_ARGUMENT", "subscribe is only supported on collection type of 'messages'"},
			{"insert on messages", "POST", docPath("db1", "msgs", "insert"), `{"documents":[{"n":1}]}`, 400, "INVALID_ARGUMENT", "insert is only supported on collection type of 'documents'"},
			{"update on messages", "PUT", docPath("db1", "msgs", "update"), `{"filter":{"n":1},"fields":{"$set":{"n":2}}}`, 400, "INVALID_ARGUMENT", "update is only supported on collection type of 'documents'"},
			{"publish to partition 1", "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"n":1}],"options":{"partition":1}}`, 400, "INVALID_ARGUMENT", "Invalid partition number `1`"},
			{"publish to partition -1", "POST", msgPath("db1", "msgs", "publish"), `{"messages":[{"n":1}],"options":{"partition":-1}}`, 400, "INVALID_ARGUMENT", "Invalid partition number `-1`"},
			{"subscribe to partition 2", "POST", msgPath("db1", "msgs", "subscribe"), `{"options":{"partitions":[0,2]}}`, 400, "INVALID_ARGUMENT", "Invalid partition number `2`"},
			{"no messages", "POST", msgPath("db1", "msgs", "publish"), `{"messages":[]}`, 400, "INVALID_ARGUMENT", "empty messages received"},
			{"missing database", "POST", msgPath("nodb", "msgs", "publish"), `{"messages":[{"n":1}]}`, 404, "NOT_FOUND", "database doesn't exist 'nodb'"},
			{"missing collection", "POST", msgPath("db1", "nothing", "subscribe"), `{}`, 404, "NOT_FOUND", "collection doesn't exist 'nothing'"},
			{"filter on a non-schema field", "POST", msgPath("db1", "msgs", "subscribe"), `{"filter":{"x":1}}`, 400, "INVALID_ARGUMENT", "querying on non schema field 'x'"},
			{"bad position", "POST", msgPath("db1", "msgs", "subscribe"), `{"options":{"start_after":"zz"}}`, 400, "INVALID_ARGUMENT", "start_after 'zz' is not a position this server gave out"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				wantError(t, c.do(t, tc.method, tc.path, tc.body), tc.status, tc.code, tc.message)
			})
		}
		if got := c.all(t, "db1", "msgs"); len(got) != 0 {
			t.Errorf("refused requests stored %q", got)
		}
	})
}
