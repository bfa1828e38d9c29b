package apitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// projectPath is the path of a 2023 call on a collection.
// count counts the documents filter matches in db's coll (body: the
// members after the filter, such as a collation).
func (c *client) count(t testing.TB, db, coll, filter, more string) int64 {
	t.Helper()
	r := c.ok(t, "POST", p23Coll(db, coll, "documents/count"), `{"filter":`+filter+more+`}`)
	var body struct {
		Count *int64 `json:"count"`
	}
	if err := json.Unmarshal(r.body, &body); err != nil || body.Count == nil {
		t.Fatalf("count %s: %s (%v)", filter, r, err)
	}
	return *body.Count
}

const countSchema = `{"title":"items","primary_key":["id"],"properties":{
	"id":{"type":"integer"},"n":{"type":"integer"},"price":{"type":"number"},"name":{"type":"string"},
	"ok":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},
	"addr":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"integer"}}},
	"note":{"type":"string"}}}`

// countDocs writes 60 documents with missing and null fields, empty arrays,
// mixed case and nested objects.
func countDocs(t *testing.T, c *client) {
	c.createDB(t, "shop")
	c.createColl(t, "shop", "items", countSchema)
	cities := []string{"Oslo", "oslo", "Bergen", "BERGEN", "Tromsø"}
	var docs []string
	for i := range 60 {
		d := map[string]any{"id": i, "price": float64(i%9) + 0.5, "name": fmt.Sprintf("Item %d", i%12),
			"tags": []string{fmt.Sprintf("t%d", i%4), fmt.Sprintf("T%d", i%4)}, "addr": map[string]any{"city": cities[i%5], "zip": 1000 + i%7}}
		switch i % 6 {
		case 0:
			delete(d, "n")
		case 1:
			d["n"] = nil
		default:
			d["n"] = i % 10
		}
		if i%5 == 0 {
			d["ok"] = i%10 == 0
			d["tags"] = []string{}
		}
		if i%7 == 0 {
			d["note"] = strings.Repeat("x", 130) + fmt.Sprint(i%2)
			delete(d, "addr")
		}
		b, _ := json.Marshal(d)
		docs = append(docs, string(b))
	}
	c.insert(t, "shop", "items", docs...)
}

// A count equals the number of documents a read with the same filter
// returns, whichever way it is counted, over every kind of filter, on both
// backends.
func TestCountMatchesRead(t *testing.T) {
	const ci = `{"case":"ci"}`
	eachBackend(t, func(t *testing.T, c *client) {
		countDocs(t, c)
		for _, tc := range []struct {
			filter, collation string
			index             bool // counted from the index entries alone
		}{
			{`{}`, "", true},
			{`{"n":3}`, "", true},
			{`{"n":{"$gt":4}}`, "", true},
			{`{"price":{"$gte":2.5,"$lte":6.5}}`, "", true},
			{`{"id":{"$lt":17}}`, "", true},
			{`{"n":{"$in":[2,3,40]}}`, "", true},
			{`{"n":{"$ne":3}}`, "", true},
			{`{"n":{"$exists":true}}`, "", true},
			{`{"n":{"$exists":false}}`, "", true},
			{`{"ok":false}`, "", true},
			{`{"ok":{"$exists":false}}`, "", true},
			{`{"addr.city":"oslo"}`, "", true},
			{`{"addr.city":"OSLO"}`, ci, true},
			{`{"addr.city":{"$gt":"B"}}`, ci, false},
			{`{"addr.zip":{"$lte":1003},"addr.city":"Bergen"}`, "", true},
			{`{"addr.city":{"$exists":false}}`, "", true},
			{`{"tags":"t1"}`, "", true},
			{`{"tags":"T1"}`, ci, true},
			{`{"tags":{"$ne":"T1"}}`, ci, true},
			{`{"tags":{"$gte":"T","$lt":"t2"}}`, "", true},
			{`{"tags":{"$ne":"t2"}}`, "", true},
			{`{"tags":[]}`, "", false},
			{`{"tags":{"$exists":true}}`, "", false},
			{`{"name":{"$regex":"^Item 1"}}`, "", false},
			{`{"name":{"$contains":"em 1"}}`, "", false},
			{`{"name":{"$not":"em 1"}}`, "", false},
			{`{"$or":[{"n":3},{"addr.zip":1002}]}`, "", true},
			{`{"$and":[{"n":{"$gte":2}},{"name":{"$ne":"Item 4"}}]}`, "", true},
			{`{"$or":[{"n":3},{"name":{"$regex":"7$"}}]}`, "", false},
			{`{"note":"` + strings.Repeat("x", 130) + `1"}`, "", false},
			{`{"note":{"$exists":true}}`, "", true},
			// Null sorts first and a missing field counts as null.
			{`{"n":null}`, "", true},
			{`{"n":{"$eq":null}}`, "", true},
			{`{"n":{"$gt":null}}`, "", true},
			{`{"n":{"$gte":null}}`, "", false}, // a complement under an $or
			{`{"n":{"$lt":null}}`, "", true},
			{`{"n":{"$ne":null}}`, "", true},
			{`{"n":{"$in":[3,null]}}`, "", false},
			{`{"n":{"$gt":null,"$lt":5}}`, "", true},
			{`{"addr.city":null}`, "", true},
			{`{"tags":null}`, "", false},
			{`{"$and":[{"n":{"$gt":null}},{"name":"Item 3"}]}`, "", true},
		} {
			t.Run(tc.filter+tc.collation, func(t *testing.T) {
				options := "" // read's and explain's collation
				if tc.collation != "" {
					options = `,"options":{"collation":` + tc.collation + `}`
				}
				read := int64(len(c.read(t, "shop", "items", `{"filter":`+tc.filter+options+`}`)))
				if got := c.count(t, "shop", "items", tc.filter, options); got != read {
					t.Errorf("count %d, read returned %d", got, read)
				}
				if tc.collation != "" {
					if got := c.count(t, "shop", "items", tc.filter, `,"collation":`+tc.collation); got != read {
						t.Errorf("count with a top-level collation %d, read returned %d", got, read)
					}
				}
				ex := c.okObject(t, "POST", docPath("shop", "items", "explain"), `{"filter":`+tc.filter+options+`,"count":true}`)
				plan, _ := ex["plan"].(string)
				byIndex := plan == "document count" || strings.HasPrefix(plan, "index count")
				if byIndex != tc.index {
					t.Errorf("explain of the count: plan %q, want counted from the index entries: %v", plan, tc.index)
				}
			})
		}
	})
}

// Comparisons with null: the field missing or null (20 of countDocs's
// documents), or holding a value (the other 40), on the read, the count,
// and a read whose plan takes another field's index.
func TestNullFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		countDocs(t, c)
		for _, tc := range []struct {
			filter string
			want   int
		}{
			{`{"n":null}`, 20},
			{`{"n":{"$eq":null}}`, 20},
			{`{"n":{"$gt":null}}`, 40},
			{`{"n":{"$gte":null}}`, 60},
			{`{"n":{"$lt":null}}`, 0},
			{`{"id":{"$lt":12},"n":null}`, 4},
			{`{"id":{"$lt":12},"n":{"$gt":null}}`, 8},
		} {
			docs := c.read(t, "shop", "items", `{"filter":`+tc.filter+`}`)
			if len(docs) != tc.want {
				t.Errorf("read %s: %d documents, want %d", tc.filter, len(docs), tc.want)
			}
			if got := c.count(t, "shop", "items", tc.filter, ""); got != int64(tc.want) {
				t.Errorf("count %s: %d, want %d", tc.filter, got, tc.want)
			}
		}
	})
}

// A count in a transaction sees the transaction's own writes, and others
// do not see them before it commits.
func TestCountInTransaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		countDocs(t, c)
		before := c.count(t, "shop", "items", `{"n":3}`, "")
		// A count of {} or $ne reads the collection's document count; on
		// PostgreSQL the background fold of its recent adds can abort the
		// transaction at commit (a false conflict, see sqlkv), which a
		// client retries: so does this test, a few times.
		for attempt := 1; ; attempt++ {
			tx := c.begin(t, "shop")
			tx.ok(t, "POST", docPath("shop", "items", "insert"), `{"documents":[{"id":100,"n":3},{"id":101,"n":3}]}`)
			tx.ok(t, "DELETE", docPath("shop", "items", "delete"), `{"filter":{"id":3}}`) // n 3 too
			inTx := func(filter string) int64 {
				r := tx.ok(t, "POST", p23Coll("shop", "items", "documents/count"), `{"filter":`+filter+`}`)
				var body struct{ Count int64 }
				if err := json.Unmarshal(r.body, &body); err != nil {
					t.Fatal(err)
				}
				return body.Count
			}
			if got := inTx(`{"n":3}`); got != before+1 {
				t.Errorf("count in the transaction: %d, want %d", got, before+1)
			}
			if got := inTx(`{}`); got != 61 {
				t.Errorf("count of all in the transaction: %d, want 61", got)
			}
			if got := inTx(`{"name":{"$regex":"^Item"}}`); got != 59 {
				t.Errorf("count by reading in the transaction: %d, want 59 (id 100 and 101 have no name)", got)
			}
			if got := c.count(t, "shop", "items", `{"n":3}`, ""); got != before {
				t.Errorf("count outside the transaction: %d, want %d", got, before)
			}
			r := tx.commit(t)
			if r.status == http.StatusOK {
				break
			}
			if r.status != http.StatusConflict || attempt == 3 {
				t.Fatalf("commit: %s", r)
			}
		}
		if got := c.count(t, "shop", "items", `{"n":3}`, ""); got != before+1 {
			t.Errorf("count after commit: %d, want %d", got, before+1)
		}
	})
}

func TestCountErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		countDocs(t, c)
		path := p23Coll("shop", "items", "documents/count")
		wantError(t, c.do(t, "POST", path, `{}`), 400, "INVALID_ARGUMENT", "filter is a required field")
		wantError(t, c.do(t, "POST", path, `{"filter":{"n2":1}}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "POST", path, `{"filter":{"name":{"$regex":"("}}}`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "POST", path, `{"filter":`), 400, "INVALID_ARGUMENT", anyMessage)
		wantError(t, c.do(t, "POST", p23Coll("shop", "nothing", "documents/count"), `{"filter":{}}`), 404, "NOT_FOUND", anyMessage)
		wantError(t, c.do(t, "POST", p23Coll("nowhere", "items", "documents/count"), `{"filter":{}}`), 404, "NOT_FOUND", anyMessage)
		c.createColl(t, "shop", "events", `{"title":"events","collection_type":"messages","properties":{"a":{"type":"integer"}}}`)
		wantError(t, c.do(t, "POST", p23Coll("shop", "events", "documents/count"), `{"filter":{}}`), 400, "INVALID_ARGUMENT", "count is only supported on collection type of 'documents'")
	})
}

// The index builds answer at once: the two system indexes, then every
// indexed field's index, active; the search index built.
func TestIndexBuildCalls(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		countDocs(t, c)
		r := c.okObject(t, "POST", p23Coll("shop", "items", "documents/index"), `{"branch":"main"}`)
		b, _ := json.Marshal(r["indexes"])
		want := `[{"name":"_tigris_created_at","state":"INDEX ACTIVE"},{"name":"_tigris_updated_at","state":"INDEX ACTIVE"},` +
			`{"fields":[{"name":"id"}],"name":"id","state":"INDEX ACTIVE"},{"fields":[{"name":"n"}],"name":"n","state":"INDEX ACTIVE"},` +
			`{"fields":[{"name":"price"}],"name":"price","state":"INDEX ACTIVE"},{"fields":[{"name":"name"}],"name":"name","state":"INDEX ACTIVE"},` +
			`{"fields":[{"name":"ok"}],"name":"ok","state":"INDEX ACTIVE"},{"fields":[{"name":"tags"}],"name":"tags","state":"INDEX ACTIVE"},` +
			`{"fields":[{"name":"addr.city"}],"name":"addr.city","state":"INDEX ACTIVE"},{"fields":[{"name":"addr.zip"}],"name":"addr.zip","state":"INDEX ACTIVE"},` +
			`{"fields":[{"name":"note"}],"name":"note","state":"INDEX ACTIVE"}]`
		if string(b) != want {
			t.Errorf("build collection index: %s\nwant %s", b, want)
		}
		r = c.okObject(t, "POST", p23Coll("shop", "items", "documents/search/index"), ``)
		if r["status"] != "success" {
			t.Errorf("build search index: %v, want status success", r)
		}
		for _, op := range []string{"documents/index", "documents/search/index"} {
			wantError(t, c.do(t, "POST", p23Coll("shop", "nothing", op), `{}`), 404, "NOT_FOUND", anyMessage)
			wantError(t, c.do(t, "POST", p23Coll("shop", "items", op), `{"branch":3}`), 400, "INVALID_ARGUMENT", anyMessage)
		}
	})
}
