package apitest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The schemas of TestDescribeSchemaFormat. The model types each must come
// back as are, word for word, in testdata/schemaformat/<collection>.<format>.txt
// (not .go: gofmt reads every .go file of the tree).
const (
	modelUsersSchema = `{"title":"users","description":"People who order.","properties":{
		"id":{"type":"integer","autoGenerate":true},
		"user_name":{"type":"string","maxLength":100,"description":"How the user signs."},
		"joined":{"type":"string","format":"date-time"},
		"address":{"type":"object","properties":{"city":{"type":"string"},"zip":{"type":"integer","format":"int32"}}},
		"tags":{"type":"array","items":{"type":"string"}}
	},"primary_key":["id"]}`
	modelOrdersSchema = `{"title":"orders","properties":{"user_id":{"type":"integer"},"n":{"type":"integer","format":"int32"},"total":{"type":"number"}},"primary_key":["user_id","n"]}`
)

// expectedModel reads the text the schema of coll must generate in format.
func expectedModel(t *testing.T, coll, format string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "schemaformat", coll+"."+format+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// generated decodes a described collection whose schema must be the
// object of generated texts, checking its other members.
func generated(t *testing.T, what string, desc json.RawMessage, coll string) map[string]string {
	t.Helper()
	var d struct {
		Collection string            `json:"collection"`
		Metadata   json.RawMessage   `json:"metadata"`
		Schema     map[string]string `json:"schema"`
		Size       *int64            `json:"size"`
		Sizes      json.RawMessage   `json:"sizes"`
	}
	dec := json.NewDecoder(bytes.NewReader(desc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v: %s", what, err, desc)
	}
	if d.Collection != coll || string(d.Metadata) != "{}" || d.Size == nil {
		t.Errorf("%s: collection %q, metadata %s, size %v: %s", what, d.Collection, d.Metadata, d.Size, desc)
	}
	return d.Schema
}

// wantModels checks that got holds exactly the formats asked for (by the
// name the request used), each the expected text of coll.
func wantModels(t *testing.T, what, coll string, got map[string]string, formats map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(got))
	for k := range got {
		keys = append(keys, k)
	}
	want := make([]string, 0, len(formats))
	for k := range formats {
		want = append(want, k)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("%s: schema has formats %q, want %q", what, keys, want)
	}
	for key, format := range formats {
		if text, exp := got[key], expectedModel(t, coll, format); text != exp {
			t.Errorf("%s: %s text of %s:\n%s\nwant:\n%s", what, key, coll, text, exp)
		}
	}
}

// TestDescribeSchemaFormat: schema_format on describe collection and
// describe database sends, in place of the schema, its model types in each
// language asked for (reference §10b).
func TestDescribeSchemaFormat(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "users", modelUsersSchema)
		c.createColl(t, "shop", "orders", modelOrdersSchema)
		c.ok(t, "POST", docPath("shop", "orders", "insert"), `{"documents":[{"user_id":1,"n":1,"total":9.5}]}`)

		for _, tc := range []struct {
			format  string
			formats map[string]string // the response's keys, and which expected text each holds
		}{
			{"go", map[string]string{"go": "go"}},
			{"ts", map[string]string{"ts": "ts"}},
			{"java", map[string]string{"java": "java"}},
			{"go,ts", map[string]string{"go": "go", "ts": "ts"}},
			{"java, go ,ts", map[string]string{"java": "java", "go": "go", "ts": "ts"}},
			// The original's other spellings; the keys are as asked.
			{"golang,typescript", map[string]string{"golang": "go", "typescript": "ts"}},
			{"go,go", map[string]string{"go": "go"}},
		} {
			body := `{"schema_format":"` + tc.format + `"}`
			r := c.ok(t, "POST", collPath("shop", "users", "describe"), body)
			wantModels(t, "describe users "+body, "users", generated(t, "describe users", r.body, "users"), tc.formats)

			// Describe database does it for every collection.
			db := c.okObject(t, "POST", dbPath("shop", "describe"), body)
			colls, _ := db["collections"].([]any)
			if len(colls) != 2 || db["db"] != "shop" {
				t.Fatalf("describe database %s: %v", body, db)
			}
			for _, coll := range colls {
				raw, _ := json.Marshal(coll)
				name, _ := coll.(map[string]any)["collection"].(string)
				wantModels(t, "describe database "+body, name, generated(t, "describe database", raw, name), tc.formats)
			}
		}

		// Generated text is sent as it is: no HTML escaping of TigrisSchema<User>.
		r := c.ok(t, "POST", collPath("shop", "users", "describe"), `{"schema_format":"ts"}`)
		if !bytes.Contains(r.body, []byte("TigrisSchema<User>")) {
			t.Errorf("describe ts: the text is escaped: %s", r.body)
		}

		// Without schema_format, or with an empty one, describe is as
		// before: the schema as it was given, byte for byte.
		for _, body := range []string{"", `{}`, `{"schema_format":""}`, `{"schema_format":"  "}`, `{"options":{},"schema_format":""}`} {
			var d struct {
				Schema json.RawMessage `json:"schema"`
			}
			r := c.ok(t, "POST", collPath("shop", "orders", "describe"), body)
			if err := json.Unmarshal(r.body, &d); err != nil || string(d.Schema) != modelOrdersSchema {
				t.Errorf("describe %s: schema %s, want the one given", body, d.Schema)
			}
			db := c.ok(t, "POST", dbPath("shop", "describe"), body)
			if !bytes.Contains(db.body, []byte(`"schema":`+modelOrdersSchema+`,`)) {
				t.Errorf("describe database %s: the orders schema is not the one given: %s", body, db.body)
			}
		}

		// An unknown format is the client's error, named; nothing is
		// generated for the formats it was listed with.
		const supported = ". supported formats are: go, ts, java"
		for body, name := range map[string]string{
			`{"schema_format":"xml"}`:     "xml",
			`{"schema_format":"go,xml"}`:  "xml",
			`{"schema_format":"go,"}`:     "",
			`{"schema_format":"go;ts"}`:   "go;ts",
			`{"schema_format":"json"}`:    "json",
			`{"schema_format":"go, RS "}`: "RS",
		} {
			msg := "unsupported schema format '" + name + "'" + supported
			wantError(t, c.do(t, "POST", collPath("shop", "users", "describe"), body), 400, "INVALID_ARGUMENT", msg)
			wantError(t, c.do(t, "POST", dbPath("shop", "describe"), body), 400, "INVALID_ARGUMENT", msg)
		}
		// The request is checked before anything is read: the format's
		// error comes first, even for a collection that does not exist.
		wantError(t, c.do(t, "POST", collPath("shop", "nobody", "describe"), `{"schema_format":"xml"}`),
			400, "INVALID_ARGUMENT", "unsupported schema format 'xml'"+supported)
		wantError(t, c.do(t, "POST", collPath("shop", "nobody", "describe"), `{"schema_format":"go"}`),
			404, "NOT_FOUND", "collection doesn't exist 'nobody'")
		// schema_format is a string.
		wantError(t, c.do(t, "POST", collPath("shop", "users", "describe"), `{"schema_format":["go"]}`),
			400, "INVALID_ARGUMENT", "malformed JSON request: 'schema_format' must be a string, not an array")
		wantError(t, c.do(t, "POST", dbPath("shop", "describe"), `{"schema_format":1}`),
			400, "INVALID_ARGUMENT", "malformed JSON request: 'schema_format' must be a string, not a number")
	})
}

// TestDescribeSchemaFormatMessages: a messages collection, which has no
// primary key, is generated too, its type without key tags.
func TestDescribeSchemaFormatMessages(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "shop")
		c.createColl(t, "shop", "order_events", `{"title":"order_events","collection_type":"messages","properties":{"order":{"type":"integer"},"kind":{"type":"string"}}}`)
		r := c.ok(t, "POST", collPath("shop", "order_events", "describe"), `{"schema_format":"go,ts,java"}`)
		got := generated(t, "describe order_events", r.body, "order_events")
		want := map[string]string{
			"go": "type OrderEvent struct {\n\tOrder int64  `json:\"order\"`\n\tKind  string `json:\"kind\"`\n}\n",
			"ts": "export interface OrderEvent extends TigrisCollectionType {\n  order: string;\n  kind: string;\n}\n",
			"java": "@TigrisCollection(value = \"order_events\")\npublic class OrderEvent implements TigrisCollectionType {\n" +
				"    private long order;\n    private String kind;\n",
		}
		for format, part := range want {
			if !strings.Contains(got[format], part) || strings.Contains(got[format], "rimary") {
				t.Errorf("%s: got\n%s\nwant it to contain\n%s\nand no primary key", format, got[format], part)
			}
		}
	})
}
