package httpapi

import (
	"testing"
	"time"

	"github.com/foliodb/folio/internal/ops"
)

// A document's times go in as its last members, whatever its spacing.
func TestAppendDocumentWithTimes(t *testing.T) {
	created := time.Date(2023, 1, 2, 3, 4, 5, 600, time.FixedZone("x", 3600))
	updated := created.Add(time.Second)
	const c, u = `"_tigris_created_at":"2023-01-02T02:04:05.0000006Z"`, `"_tigris_updated_at":"2023-01-02T02:04:06.0000006Z"`
	for _, tc := range []struct {
		doc     string
		updated time.Time
		want    string
	}{
		{`{"a":1}`, time.Time{}, `{"a":1,` + c + `}`},
		{`{"a":1}`, updated, `{"a":1,` + c + `,` + u + `}`},
		{`{}`, time.Time{}, `{` + c + `}`},
		{`{ }`, updated, `{ ` + c + `,` + u + `}`},
		{`{"a":1} `, time.Time{}, `{"a":1,` + c + `}`},
		{"{\n  \"a\": {\"b\": 2}\n}", time.Time{}, `{"a":{"b":2},` + c + `}`},
		{``, time.Time{}, `null`},
	} {
		got := string(appendDocumentWithTimes([]byte("["), ops.Item{Data: []byte(tc.doc), CreatedAt: created, UpdatedAt: tc.updated}))
		if got != "["+tc.want {
			t.Errorf("%q: got %s, want [%s", tc.doc, got, tc.want)
		}
	}
}
