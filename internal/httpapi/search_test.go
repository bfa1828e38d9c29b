package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/ops"
	"github.com/foliodb/folio/internal/search"
)

// TestAppendSearchChunk: the page written by hand is byte for byte what
// encoding/json makes of it, for compact documents without the characters
// encoding/json escapes for HTML (TestPrettyDocumentsStayOnOneLine has the
// others).
func TestAppendSearchChunk(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 30, 0, 123456789, time.FixedZone("CET", 3600))
	one, two := 1.5, -2.0
	for _, tc := range []struct {
		name string
		page ops.SearchPage
	}{
		{"empty", ops.SearchPage{Page: 1, Size: 20}},
		{"hits", ops.SearchPage{Hits: []ops.SearchHit{
			{Data: []byte(`{"id":1,"s":"a \"q\" \u00e9","n":[1,{"x":null}]}`), CreatedAt: at},
			{Data: []byte(`{"id":2}`), CreatedAt: at, UpdatedAt: at.Add(time.Hour)},
			{Data: []byte(`{"id":3}`), UpdatedAt: at},
			{Data: []byte(`{}`)},
		}, Found: 4, TotalPages: 1, Page: 1, Size: 20}},
		{"facets", ops.SearchPage{Hits: []ops.SearchHit{{Data: []byte(`{"id":1}`), CreatedAt: at}},
			Facets: map[string]ops.SearchFacet{
				"tag":  {Counts: []search.FacetCount{{Value: "a", Count: 3}, {Value: "<b>", Count: 1}}},
				"size": {Stats: search.FacetStats{Count: 2, Avg: &one, Min: &two, Max: &one, Sum: &one}},
			}, Found: 1, TotalPages: 1, Page: 1, Size: 1}},
	} {
		want, err := json.Marshal(searchChunk(tc.page))
		if err != nil {
			t.Fatal(err)
		}
		tail, err := searchChunkTail(tc.page)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendSearchChunk([]byte("prefix"), tc.page, tail); string(got) != "prefix"+string(want) {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got[len("prefix"):], want)
		}
	}
}

// Every stream line that carries a stored document stays one line when the
// document was written pretty-printed.
func TestStreamLinesCompactDocuments(t *testing.T) {
	pretty := []byte("{\n  \"a\": [1,\n 2],\r\n  \"b\": \"x y\"\n}")
	want := `{"a":[1,2],"b":"x y"}`
	item := &ops.StreamItem{Data: pretty, Op: "insert", Collection: "c", Position: "p"}
	for name, line := range map[string][]byte{
		"read":    appendReadChunk(nil, ops.Item{Data: pretty, CreatedAt: time.Now()}),
		"search":  appendSearchChunk(nil, ops.SearchPage{Hits: []ops.SearchHit{{Data: pretty}}}, []byte(`}`)),
		"event":   eventChunk(nil, item),
		"message": messageChunk(nil, item),
	} {
		if bytes.ContainsAny(line, "\r\n") || !json.Valid(line) || !bytes.Contains(line, []byte(want)) {
			t.Errorf("%s line: %s", name, line)
		}
	}
}
