package apitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescribeSchemaFormatFinal: on the 2023 routes, schema_format sends
// the final server's text (v1.0.0-beta.122), as its suite expects it for
// its test collection (TestDescribeCollectionSchemaFormat,
// TestDescribeDatabaseSchemaFormat): Go and TypeScript byte for byte
// (testdata/schemaformat/final holds its expected texts); Java with
// equals and hashCode by value where beta.122 compared references
// (docs/api.md). The 2022 routes keep the 2022 text for the same
// collection.
func TestDescribeSchemaFormatFinal(t *testing.T) {
	read := func(t *testing.T, name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "schemaformat", "final", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	eachBackend(t, func(t *testing.T, c *client) {
		schema := read(t, "test_collection.json")
		wantGo, wantTS := read(t, "test_collection.go.txt"), read(t, "test_collection.ts.txt")
		c.ok(t, "POST", projectPath("p1", "create"), "")
		c.ok(t, "POST", p23Coll("p1", "test_collection", "createOrUpdate"), `{"schema":`+schema+`}`)

		checkJava := func(t *testing.T, what, java string) {
			t.Helper()
			for _, part := range []string{
				"\n@com.tigrisdata.db.annotation.TigrisCollection(value = \"test_collection\")\npublic class TestCollection implements TigrisCollectionType {\n",
				"    public void setArray_value(ArrayValue[] arrayValues) {\n        this.array_value = arrayValues;\n    }\n",
				"    public TestCollection() {};\n",
				"            Objects.equals(string_value, other.string_value) &&\n",
				"            Arrays.hashCode(array_value),\n",
			} {
				if !strings.Contains(java, part) {
					t.Errorf("%s: java text lacks %q:\n%s", what, part, java)
				}
			}
		}

		r := c.ok(t, "POST", p23Coll("p1", "test_collection", "describe"), `{"schema_format":"go,ts,java"}`)
		var coll struct {
			Collection string            `json:"collection"`
			Schema     map[string]string `json:"schema"`
		}
		if err := json.Unmarshal(r.body, &coll); err != nil || coll.Collection != "test_collection" {
			t.Fatalf("describe collection: %v: %s", err, r.body)
		}
		if coll.Schema["go"] != wantGo {
			t.Errorf("go text:\n%s\nwant beta.122's:\n%s", coll.Schema["go"], wantGo)
		}
		if coll.Schema["ts"] != wantTS {
			t.Errorf("ts text:\n%s\nwant beta.122's:\n%s", coll.Schema["ts"], wantTS)
		}
		checkJava(t, "describe collection", coll.Schema["java"])

		// Describe database, with the spellings and spaces of beta.122's
		// test: the keys are as asked.
		r = c.ok(t, "POST", p23Path("p1", "describe"), `{"schema_format":"   TypeScript,   Golang,java"}`)
		var db struct {
			Collections []struct {
				Collection string            `json:"collection"`
				Schema     map[string]string `json:"schema"`
			} `json:"collections"`
		}
		if err := json.Unmarshal(r.body, &db); err != nil || len(db.Collections) != 1 {
			t.Fatalf("describe database: %v: %s", err, r.body)
		}
		got := db.Collections[0].Schema
		if len(got) != 3 || got["Golang"] != wantGo || got["TypeScript"] != wantTS {
			t.Errorf("describe database: schema %q", got)
		}
		checkJava(t, "describe database", got["java"])

		// The same collection over the 2022 routes: the 2022 text.
		r = c.ok(t, "POST", collPath("p1", "test_collection", "describe"), `{"schema_format":"go,ts"}`)
		coll.Schema = nil
		if err := json.Unmarshal(r.body, &coll); err != nil {
			t.Fatal(err)
		}
		if coll.Schema["go"] == wantGo || !strings.Contains(coll.Schema["go"], "\tArrayValue []ArrayValue `json:\"array_value\"`") ||
			!strings.Contains(coll.Schema["ts"], "export interface TestCollection extends TigrisCollectionType {") {
			t.Errorf("2022 route: not the 2022 text: %q", coll.Schema)
		}
	})
}
