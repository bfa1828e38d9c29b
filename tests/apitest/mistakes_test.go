package apitest

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata")

// mistakeStep is one request of a transcript.
type mistakeStep struct{ method, path, body string }

// A newcomer's mistakes and what the server answers (issue 41, items 1
// and 6): a typo in a schema's top-level members or in a request's
// options is refused with the member named and the close one suggested
// (what the official clients send is not refused); a filter's value of
// the wrong type, a duplicate key, a bad name and a misspelled field are
// answered with the original's code and the start of its message, then
// what was wrong. Every answer, on every backend, must equal the golden
// transcript.
var mistakes = []mistakeStep{
	{"POST", dbPath("1db", "create"), ""},
	{"POST", dbPath("type", "create"), ""},
	{"POST", dbPath("shop", "create"), ""},

	// Schemas: unknown top-level members, then what the clients send.
	{"POST", collPath("shop", "typo", "createOrUpdate"), `{"schema":{"title":"typo","properties":{"email":{"type":"string"}},"primary_keys":["email"]}}`},
	{"POST", collPath("shop", "typo", "createOrUpdate"), `{"schema":{"title":"typo","properties":{"email":{"type":"string"}},"primary_key":["email"],"ttl":3600}}`},
	{"POST", collPath("shop", "typo", "createOrUpdate"), `{"schema":{"title":"typo","properties":{"email":{"type":"string"}},"primary_key":["email"],"indexes":["email"]}}`},
	{"POST", collPath("shop", "typo", "createOrUpdate"), `{"schema":{"title":"typo","properties":{"email":{"type":"string"}},"primary_key":["email"],"foo":1}}`},
	{"POST", collPath("shop", "typo", "createOrUpdate"), `{"schema":{"title":"typo","properties":{"email":{"type":"string","maxlength":64}},"primary_key":["email"]}}`},
	{"POST", collPath("shop", "typo", "describe"), ""},
	// The final TypeScript client's members, then the final Go client's.
	{"POST", collPath("shop", "users", "createOrUpdate"), `{"schema":{"title":"users","additionalProperties":false,"type":"object","properties":{"email":{"type":"string"},"name":{"type":"string"},"age":{"type":"integer"},"address":{"type":"object","properties":{"city":{"type":"string"}}}},"primary_key":["email"]}}`},
	{"POST", collPath("shop", "orders", "createOrUpdate"), `{"schema":{"version":2,"title":"orders","properties":{"id":{"type":"integer"},"total":{"type":"number"}},"primary_key":["id"],"required":["total"],"index":["total"],"collection_type":"documents"}}`},

	// Documents: duplicates, a misspelled field.
	{"POST", docPath("shop", "users", "insert"), `{"documents":[{"email":"ann@example.com","name":"Ann","age":40}]}`},
	{"POST", docPath("shop", "users", "insert"), `{"documents":[{"email":"ann@example.com","name":"Ann again"}]}`},
	{"POST", docPath("shop", "users", "insert"), `{"documents":[{"email":"bob@example.com"},{"email":"bob@example.com"}]}`},
	{"POST", docPath("shop", "users", "insert"), `{"documents":[{"email":"cy@example.com","nmae":"Cy"}]}`},
	{"POST", docPath("shop", "users", "insert"), `{"documents":[{"email":"cy@example.com","address":{"cty":"Oslo"}}]}`},

	// Filters: values of the wrong type.
	{"POST", docPath("shop", "users", "read"), `{"filter":{"age":"thirty"}}`},
	{"POST", docPath("shop", "users", "read"), `{"filter":{"age":{"$gt":30.5}}}`},
	{"POST", docPath("shop", "users", "read"), `{"filter":{"address":{"city":"Oslo"}}}`},

	// Options: a typo, and options a request does not have.
	{"POST", docPath("shop", "users", "read"), `{"filter":{"age":40},"options":{"limt":1}}`},
	{"POST", docPath("shop", "users", "read"), `{"filter":{"age":40},"options":{"limit":1,"skip":0}}`},
	{"PUT", docPath("shop", "users", "update"), `{"filter":{"name":"ann"},"fields":{"$set":{"age":41}},"options":{"colation":{"case":"ci"}}}`},
	{"POST", docPath("shop", "users", "insert"), `{"documents":[{"email":"dee@example.com"}],"options":{"write_option":{}}}`},
	{"DELETE", docPath("shop", "users", "delete"), `{"filter":{"age":40},"options":{"upsert":true}}`},
	{"POST", collPath("shop", "users", "createOrUpdate"), `{"schema":{"title":"users","properties":{"email":{"type":"string"}},"primary_key":["email"]},"options":{"only_create":true}}`},
	{"POST", dbPath("shop", "transactions/begin"), `{"options":{"timeout":5}}`},
}

// varyingTimes are the timestamps of a success's body, which differ from
// run to run.
var varyingTimes = regexp.MustCompile(`"(created_at|updated_at|deleted_at)":"[^"]*"`)

func TestMistakesTranscript(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		var transcript bytes.Buffer
		for _, step := range mistakes {
			r := c.do(t, step.method, step.path, step.body)
			fmt.Fprintln(&transcript, strings.TrimSpace(step.method+" "+step.path+" "+step.body))
			body := varyingTimes.ReplaceAllString(strings.TrimSpace(string(r.body)), `"$1":"…"`)
			fmt.Fprintf(&transcript, "%d %s\n\n", r.status, body)
		}
		goldenFile(t, "mistakes.golden", transcript.String())
	})
}

// goldenFile compares got with testdata/name, or writes it there with
// -update.
func goldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to write it)", err)
	}
	if got != string(want) {
		w, g := strings.Split(string(want), "\n"), strings.Split(got, "\n")
		var diff strings.Builder
		for i := range max(len(w), len(g)) {
			var wl, gl string
			if i < len(w) {
				wl = w[i]
			}
			if i < len(g) {
				gl = g[i]
			}
			if wl != gl {
				fmt.Fprintf(&diff, "%d:\n- %s\n+ %s\n", i+1, wl, gl)
			}
		}
		t.Errorf("the answers differ from %s (-want +got):\n%s", path, diff.String())
	}
}
