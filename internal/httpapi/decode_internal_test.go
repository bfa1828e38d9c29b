package httpapi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// rawMembers decodes a body exactly as encoding/json does into the read
// body's struct, for every body it takes; it leaves the rest alone.
func FuzzRawMembers(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"filter":{"id":5}}`, ` {"filter" : {"id": 5} , "fields":{"a":true}} `,
		`{"filter":{"id":5},"sort":[{"a":"$asc"}]}`, `{"filter":null}`, `{"Filter":{}}`, `{"filter":{},"filter":{}}`,
		`{"fil\\u0074er":{}}`, `{"filter":{"id":5},"options":{"limit":1}}`, `[]`, `null`, `{"filter":{"id":5}`,
		`{"filter":{"id":5}} x`, `{"filter":"\\ud800"}`, `{"filter":1e5,"fields":[1,2]}`, `{"sort":{"a":{"b":[]}}}`,
	} {
		f.Add(s)
	}
	type readBody struct {
		Filter json.RawMessage `json:"filter"`
		Fields json.RawMessage `json:"fields"`
		Sort   json.RawMessage `json:"sort"`
	}
	f.Fuzz(func(t *testing.T, body string) {
		var fast readBody
		if !rawMembers([]byte(body), readMembers, []*json.RawMessage{&fast.Filter, &fast.Fields, &fast.Sort}) {
			if fast.Filter != nil || fast.Fields != nil || fast.Sort != nil {
				t.Fatalf("rawMembers left %q for encoding/json but stored %+v", body, fast)
			}
			return
		}
		var slow readBody
		if err := json.Unmarshal([]byte(body), &slow); err != nil {
			t.Fatalf("rawMembers took %q, which encoding/json refuses: %v", body, err)
		}
		if err := duplicateMembers([]byte(body)); err != nil {
			t.Fatalf("rawMembers took %q, which repeats a member: %v", body, err)
		}
		if !bytes.Equal(fast.Filter, slow.Filter) || !bytes.Equal(fast.Fields, slow.Fields) || !bytes.Equal(fast.Sort, slow.Sort) {
			t.Fatalf("%q: rawMembers %q %q %q, encoding/json %q %q %q", body, fast.Filter, fast.Fields, fast.Sort, slow.Filter, slow.Fields, slow.Sort)
		}
	})
}

// The common read bodies take the fast path.
func TestRawMembersTakesCommonReads(t *testing.T) {
	for _, body := range []string{`{"filter":{"id":5}}`, `{"filter":{"a":{"$gt":1}},"fields":{"a":true},"sort":[{"a":"$desc"}]}`, `{}`} {
		var f, fi, so json.RawMessage
		if !rawMembers([]byte(body), readMembers, []*json.RawMessage{&f, &fi, &so}) {
			t.Errorf("%s: left to encoding/json", body)
		}
	}
}
