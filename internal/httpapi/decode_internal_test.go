package httpapi

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
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
		if err := checkEnvelope([]byte(body), nil); err != nil {
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

// Each request's options are the fields of its published options message
// in api.proto (and what Folio reads beside them): no option an official
// client sends is refused, and every options message has its list.
func TestOptionsAreThePublishedOnes(t *testing.T) {
	messages := protoMessages(t, "../../api/proto/tigrisdata/v1/api.proto")
	covered := map[string]bool{}
	for _, tc := range []struct {
		name     string
		got      options
		messages []string
		extra    []string
	}{
		{"noOptions", noOptions, []string{"DatabaseOptions", "CollectionOptions", "TransactionOptions"}, nil},
		{"writeOnlyOptions", writeOnlyOptions, []string{"InsertRequestOptions", "ReplaceRequestOptions", "ImportRequestOptions"}, nil},
		{"filterWriteOptions", filterWriteOptions, []string{"UpdateRequestOptions", "DeleteRequestOptions"}, nil},
		{"readOptions", readOptions, []string{"ReadRequestOptions"}, nil},
		{"eventsOptions", eventsOptions, []string{"EventsRequestOptions"}, nil},
		{"publishOptions", publishOptions, []string{"PublishRequestOptions"}, nil},
		{"subscribeOptions", subscribeOptions, []string{"SubscribeRequestOptions"}, nil},
		{"countOptions", countOptions, nil, []string{"collation"}},
		{"aggregateOptions", aggregateOptions, nil, []string{"collation"}},
	} {
		if tc.got == nil {
			t.Errorf("%s is nil, which checks nothing", tc.name)
		}
		for _, m := range tc.messages {
			fields, ok := messages[m]
			if !ok {
				t.Fatalf("api.proto has no message %s", m)
			}
			covered[m] = true
			want := append(slices.Clone(fields), tc.extra...)
			if !slices.Equal(slices.Sorted(slices.Values(tc.got)), slices.Sorted(slices.Values(want))) {
				t.Errorf("%s = %v, want %v (the fields of %s)", tc.name, tc.got, want, m)
			}
		}
	}
	for m, fields := range messages {
		if strings.HasSuffix(m, "Options") && m != "WriteOptions" && !covered[m] {
			t.Errorf("api.proto's %s (fields %v) has no list of options here", m, fields)
		}
	}
}

// protoMessages reads the field names of each message of a .proto file.
func protoMessages(t *testing.T, path string) map[string][]string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	start := regexp.MustCompile(`^message (\w+) \{`)
	field := regexp.MustCompile(`^\s*(?:repeated |optional )?[\w.]+ (\w+) = \d+;`)
	messages := map[string][]string{}
	current := ""
	for _, line := range strings.Split(string(text), "\n") {
		switch {
		case start.MatchString(line):
			current = start.FindStringSubmatch(line)[1]
			messages[current] = []string{}
		case strings.HasPrefix(line, "}"):
			current = ""
		case current != "" && field.MatchString(line):
			messages[current] = append(messages[current], field.FindStringSubmatch(line)[1])
		}
	}
	return messages
}

// An options member that the request does not have is refused, with the
// close one named; one it has is not, nor anything in a request that has
// no options.
func TestUnknownOptions(t *testing.T) {
	for _, tc := range []struct {
		body  string
		known options
		err   string
	}{
		{`{"options":{"limit":1,"skip":2,"offset":"","collation":{"case":"ci"}}}`, readOptions, ""},
		{`{"options":{"limt":1}}`, readOptions, "unknown option 'limt' (did you mean 'limit'?)"},
		{`{"options":{"Limit":1}}`, readOptions, "unknown option 'Limit' (did you mean 'limit'?)"},
		{`{"options":{"colation":{}}}`, filterWriteOptions, "unknown option 'colation' (did you mean 'collation'?)"},
		{`{"options":{"ttl":5}}`, readOptions, "unknown option 'ttl': this request's options are limit, skip, offset, collation"},
		{`{"options":{"write_options":{"anything":1}}}`, writeOnlyOptions, ""},
		{`{"options":{"upsert":true}}`, noOptions, "unknown option 'upsert': this request takes no options"},
		{`{"options":{}}`, noOptions, ""},
		{`{"options":{"anything":1}}`, nil, ""},
		{`{"limt":1}`, readOptions, ""}, // the top level is not the options
		{`{"options":{"limit":1,"limit":2}}`, readOptions, "member 'options.limit' is given twice in the request"},
	} {
		err := checkEnvelope([]byte(tc.body), tc.known)
		if got := errText(err); got != tc.err {
			t.Errorf("%s: error %q, want %q", tc.body, got, tc.err)
		}
	}
}

func errText(err error) string {
	if e, ok := apierror.From(err); ok {
		return e.Message
	}
	if err != nil {
		return err.Error()
	}
	return ""
}
