package apitest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
)

// Search over a messages collection (reference §1: messages/search is the
// same call as documents/search): the stored messages are indexed from
// their publish records in the change log, and hits are read from the
// store with their publish time as created_at.

// msgSearch is messages/search on db1.msgs.
func (c *client) msgSearch(t testing.TB, body string) []searchChunk {
	t.Helper()
	return c.searchAt(t, msgPath("db1", "msgs", "search"), body)
}

func TestSearchMessages(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		withMessages(t, c)
		before := time.Now().Add(-time.Second)
		c.publish(t,
			`{"kind":"alert","n":3,"text":"disk full on host one"}`,
			`{"kind":"info","n":1,"text":"backup finished"}`,
			`{"text":"disk replaced","n":7,"kind":"alert"}`,
			`{"kind":"info","n":5,"text":"host one rebooted after the disk check"}`,
		)
		c.publish(t, `{"kind":"debug","n":2,"text":"nothing to say"}`)

		// A term: the messages come back byte for byte as published, with
		// their publish time and no updated_at.
		ch := c.msgSearch(t, `{"q":"disk","sort":[{"n":"$asc"}]}`)
		if ch[0].Meta.Found != 3 || len(ch) != 1 {
			t.Fatalf("q disk: found %d in %d chunks, want 3 in one", ch[0].Meta.Found, len(ch))
		}
		var got []string
		for _, h := range ch[0].Hits {
			got = append(got, string(h.Data))
			at := parseTime(t, h.Metadata.CreatedAt)
			if at.Before(before) || at.After(time.Now().Add(time.Second)) {
				t.Errorf("created_at %s is not the publish time", h.Metadata.CreatedAt)
			}
			if h.Metadata.UpdatedAt != "" {
				t.Errorf("a message has updated_at %q", h.Metadata.UpdatedAt)
			}
		}
		equalStrings(t, "q disk, by n", got, []string{
			`{"kind":"alert","n":3,"text":"disk full on host one"}`,
			`{"kind":"info","n":5,"text":"host one rebooted after the disk check"}`,
			`{"text":"disk replaced","n":7,"kind":"alert"}`,
		})

		// A phrase, a filter, search_fields, include_fields.
		if got := hitField(t, c.msgSearch(t, `{"q":"\"host one\"","sort":[{"n":"$desc"}]}`), "n"); !slices.Equal(got, []string{"5", "3"}) {
			t.Errorf("phrase: n %v, want [5 3]", got)
		}
		if got := hitField(t, c.msgSearch(t, `{"q":"disk","filter":{"kind":"alert"},"sort":[{"n":"$desc"}]}`), "n"); !slices.Equal(got, []string{"7", "3"}) {
			t.Errorf("q + filter: n %v, want [7 3]", got)
		}
		if got := hitField(t, c.msgSearch(t, `{"q":"info","search_fields":["text"]}`), "n"); len(got) != 0 {
			t.Errorf("info is a kind, not in text: %v", got)
		}
		ch = c.msgSearch(t, `{"q":"backup","include_fields":["kind"]}`)
		if len(ch[0].Hits) != 1 || string(ch[0].Hits[0].Data) != `{"kind":"info"}` {
			t.Errorf("include_fields: %+v", ch[0].Hits)
		}

		// Facets and stats, against counts computed from the messages.
		ch = c.msgSearch(t, `{"filter":{"n":{"$gte":2}},"facet":{"kind":{},"n":{"size":2}},"page":1}`)
		kinds := map[string]int64{}
		for _, fc := range ch[0].Facets["kind"].Counts {
			kinds[fc.Value] = fc.Count
		}
		if ch[0].Meta.Found != 4 || kinds["alert"] != 2 || kinds["info"] != 1 || kinds["debug"] != 1 || len(kinds) != 3 {
			t.Errorf("facet kind over n >= 2: found %d, %v", ch[0].Meta.Found, kinds)
		}
		st := ch[0].Facets["n"].Stats
		if st.Count != 4 || st.Sum == nil || *st.Sum != 17 || *st.Min != 2 || *st.Max != 7 || *st.Avg != 4.25 || len(ch[0].Facets["n"].Counts) != 2 {
			t.Errorf("facet n stats: %+v, counts %v", st, ch[0].Facets["n"].Counts)
		}

		// Pages: streamed one chunk per page, in publish order (equal
		// scores fall back to the key, which leads with the publish time).
		ch = c.msgSearch(t, `{"page_size":2}`)
		if len(ch) != 3 || ch[0].Meta.TotalPages != 3 || ch[2].Meta.Page.Current != 3 {
			t.Fatalf("streamed pages: %d chunks, meta %+v", len(ch), ch[0].Meta)
		}
		equalStrings(t, "every message in publish order", hitField(t, ch, "n"), []string{"3", "1", "7", "5", "2"})

		// documents/search on a messages collection is the same call.
		if got := hitField(t, c.search(t, "db1", "msgs", `{"q":"nothing"}`), "n"); !slices.Equal(got, []string{"2"}) {
			t.Errorf("documents/search on messages: %v", got)
		}
		// And messages/search on a documents collection searches its
		// documents, as the original's one Search call did.
		setupArticles0(t, c)
		if got := hitField(t, c.searchAt(t, msgPath("db1", "articles", "search"), `{"q":"fox","sort":[{"id":"$asc"}]}`), "id"); !slices.Equal(got, []string{"1", "4"}) {
			t.Errorf("messages/search on documents: %v", got)
		}

		// Read your writes: a message is found right after its publish.
		for i := range 10 {
			c.publish(t, fmt.Sprintf(`{"kind":"seq","n":%d,"text":"token%d"}`, 100+i, i))
			if got := hitField(t, c.msgSearch(t, fmt.Sprintf(`{"q":"token%d"}`, i)), "n"); !slices.Equal(got, []string{fmt.Sprint(100 + i)}) {
				t.Fatalf("right after publishing %d: %v", i, got)
			}
		}
	})
}

// setupArticles0 adds the articles collection to an existing db1.
func setupArticles0(t *testing.T, c *client) {
	t.Helper()
	c.createColl(t, "db1", "articles", articlesSchema)
	c.insert(t, "db1", "articles", articles...)
}

// A message published inside a transaction is searchable once the
// transaction commits, not before; a dropped and re-created messages
// collection finds none of the old messages.
func TestSearchMessagesTransactionAndDrop(t *testing.T) {
	eachBackendWith(t, node.DefaultConfigWith(func(nc *node.Config) {
		nc.Ops.SearchWait = 2 * time.Second
	}), func(t *testing.T, c *client) {
		withMessages(t, c)
		c.publish(t, `{"kind":"a","n":1,"text":"outside"}`)
		tx := c.okObject(t, "POST", dbPath("db1", "transactions/begin"), "")
		txCtx := obj(t, tx, "tx_ctx")
		inTx := func(path, body string) *response {
			req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(body))
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			req.Header.Set("Tigris-Tx-Id", str(t, txCtx, "id"))
			req.Header.Set("Tigris-Tx-Origin", str(t, txCtx, "origin"))
			return c.doRequest(t, req)
		}
		if r := inTx(msgPath("db1", "msgs", "publish"), `{"messages":[{"kind":"a","n":2,"text":"intx"}]}`); r.status != 200 {
			t.Fatalf("publish in tx: %s", r)
		}
		// On PostgreSQL the log cannot be read past an open transaction:
		// the search may wait and answer 503; it never shows the message.
		if r := c.do(t, "POST", msgPath("db1", "msgs", "search"), `{"q":"intx"}`); r.status == 200 {
			if got := hitField(t, c.msgSearch(t, `{"q":"intx"}`), "n"); len(got) != 0 {
				t.Errorf("an uncommitted message is found: %v", got)
			}
		} else {
			wantError(t, r, 503, "UNAVAILABLE", "the search index has not caught up with the latest writes yet; retry later")
		}
		if r := inTx(dbPath("db1", "transactions/commit"), ""); r.status != 200 {
			t.Fatalf("commit: %s", r)
		}
		if got := hitField(t, c.msgSearch(t, `{"q":"intx"}`), "n"); !slices.Equal(got, []string{"2"}) {
			t.Errorf("after the commit: %v", got)
		}

		c.ok(t, "DELETE", collPath("db1", "msgs", "drop"), "")
		wantError(t, c.do(t, "POST", msgPath("db1", "msgs", "search"), `{}`), 404, "NOT_FOUND", anyMessage)
		c.createColl(t, "db1", "msgs", messagesSchema)
		if ch := c.msgSearch(t, `{}`); ch[0].Meta.Found != 0 || len(ch[0].Hits) != 0 {
			t.Errorf("the re-created collection finds old messages: %+v", ch[0])
		}
		c.publish(t, `{"kind":"b","n":9,"text":"outside again"}`)
		if got := hitField(t, c.msgSearch(t, `{"q":"outside"}`), "n"); !slices.Equal(got, []string{"9"}) {
			t.Errorf("the re-created collection: %v", got)
		}
	})
}
