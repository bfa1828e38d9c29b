package apitest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// kindsSchema has a field of every type and format of reference §5.
const kindsSchema = `{"title":"kinds","properties":{
	"id":{"type":"integer"},
	"i32":{"type":"integer","format":"int32"},
	"i64":{"type":"integer","format":"int64"},
	"num":{"type":"number"},
	"ok":{"type":"boolean"},
	"s":{"type":"string","maxLength":3,"description":"short"},
	"u":{"type":"string","format":"uuid"},
	"dt":{"type":"string","format":"date-time"},
	"b":{"type":"string","format":"byte"},
	"b64":{"type":"string","contentEncoding":"base64"},
	"obj":{"type":"object","properties":{"a":{"type":"integer"},"inner":{"type":"object","properties":{"x":{"type":"string"}}}}},
	"free":{"type":"object"},
	"arr":{"type":"array","items":{"type":"integer"}},
	"objs":{"type":"array","items":{"type":"object","properties":{"n":{"type":"string"}}}}
},"primary_key":["id"]}`

// Documents are validated against the schema; the messages name the field
// (as a JSON pointer without its slash) and the reason.
func TestSchemaValidation(t *testing.T) {
	for _, tc := range []struct {
		member        string // the document's members besides id
		field, reason string // "" and "": valid
	}{
		{`"i32":2147483647`, "", ""},
		{`"i32":-2147483648`, "", ""},
		{`"i32":2147483648`, "i32", "'2147483648' is not valid 'int32'"},
		{`"i32":-2147483649`, "i32", "'-2147483649' is not valid 'int32'"},
		{`"i32":1.0`, "i32", "expected integer or null, but got number"},
		{`"i32":"1.0"`, "i32", "expected integer or null, but got string"}, // "1" is taken as 1: see TestIntegersAsStrings
		{`"i64":9223372036854775807`, "", ""},
		{`"i64":9223372036854775808`, "i64", "'9223372036854775808' is not valid 'int64'"},
		{`"num":1.5e3`, "", ""},
		{`"num":-2`, "", ""},
		{`"num":"1"`, "num", "expected number or null, but got string"},
		{`"ok":false`, "", ""},
		{`"ok":"true"`, "ok", "expected boolean or null, but got string"},
		{`"s":"abc"`, "", ""},
		{`"s":"ééé"`, "", ""}, // maxLength counts characters
		{`"s":"abcd"`, "s", "length must be <= 3, but got 4"},
		{`"s":1`, "s", "expected string or null, but got number"},
		{`"u":"4b0b5e5e-9f1a-4a8e-8f3e-0c9d2e0e6a11"`, "", ""},
		{`"u":"abc-bcd"`, "u", "'abc-bcd' is not valid 'uuid'"},
		{`"dt":"2022-09-16T17:42:34.123456789Z"`, "", ""},
		{`"dt":"2022-09-16T17:42:34+02:00"`, "", ""},
		{`"dt":"2022-09-16"`, "dt", "'2022-09-16' is not valid 'date-time'"},
		{`"b":"aGVsbG8="`, "", ""},
		{`"b":"not enough"`, "b", "'not enough' is not valid 'byte'"},
		{`"b64":"aGVsbG8="`, "", ""},
		{`"obj":{"a":1,"inner":{"x":"y"}}`, "", ""},
		{`"obj":{"a":"x"}`, "obj/a", "expected integer or null, but got string"},
		{`"obj":{"inner":{"x":1}}`, "obj/inner/x", "expected string or null, but got number"},
		{`"obj":{"zz":1}`, "obj", "additionalProperties 'zz' not allowed"},
		{`"obj":[]`, "obj", "expected object or null, but got array"},
		{`"free":{"anything":[1,{"deep":null}]}`, "", ""},
		{`"arr":[1,2,3]`, "", ""},
		{`"arr":[]`, "", ""},
		{`"arr":[1,"x"]`, "arr/1", "expected integer or null, but got string"},
		{`"arr":5`, "arr", "expected array or null, but got number"},
		{`"objs":[{"n":"a"},{"n":1}]`, "objs/1/n", "expected string or null, but got number"},
		{`"extra_key":1`, "", "additionalProperties 'extra_key' not allowed"},
		// Nulls pass, even for fields the schema does not know.
		{`"s":null,"obj":null,"unknown":null`, "", ""},
	} {
		tc := tc
		t.Run(tc.member, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, c *client) {
				c.createDB(t, "db1")
				c.createColl(t, "db1", "kinds", kindsSchema)
				doc := `{"id":1,` + tc.member + `}`
				r := c.do(t, "POST", docPath("db1", "kinds", "insert"), `{"documents":[`+doc+`]}`)
				if tc.reason == "" {
					if r.status != 200 {
						t.Fatalf("valid document %s refused: %s", doc, r)
					}
					equalStrings(t, "stored", c.all(t, "db1", "kinds"), []string{doc})
					return
				}
				wantError(t, r, 400, "INVALID_ARGUMENT", "json schema validation failed for field '"+tc.field+"' reason '"+tc.reason+"'")
				// replace validates the same way
				wantError(t, c.do(t, "PUT", docPath("db1", "kinds", "replace"), `{"documents":[`+doc+`]}`),
					400, "INVALID_ARGUMENT", "json schema validation failed for field '"+tc.field+"' reason '"+tc.reason+"'")
				if got := c.all(t, "db1", "kinds"); len(got) != 0 {
					t.Errorf("invalid document stored: %q", got)
				}
			})
		})
	}
}

// An update is validated as a whole document after the change.
func TestSchemaValidationOnUpdate(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "kinds", kindsSchema)
		c.insert(t, "db1", "kinds", `{"id":1,"s":"abc"}`)
		update := func(fields string) *response {
			return c.do(t, "PUT", docPath("db1", "kinds", "update"), `{"filter":{"id":1},"fields":`+fields+`}`)
		}
		wantError(t, update(`{"$set":{"s":"abcd"}}`), 400, "INVALID_ARGUMENT", "json schema validation failed for field 's' reason 'length must be <= 3, but got 4'")
		wantError(t, update(`{"$set":{"obj.a":"x"}}`), 400, "INVALID_ARGUMENT", "json schema validation failed for field 'obj/a' reason 'expected integer or null, but got string'")
		wantError(t, update(`{"$set":{"nope":1}}`), 400, "INVALID_ARGUMENT", anyMessage)
		equalStrings(t, "unchanged", c.all(t, "db1", "kinds"), []string{`{"id":1,"s":"abc"}`})
		c.ok(t, "PUT", docPath("db1", "kinds", "update"), `{"filter":{"id":1},"fields":{"$set":{"obj.inner.x":"deep","i32":-1}}}`)
		equalStrings(t, "updated", c.all(t, "db1", "kinds"), []string{`{"id":1,"s":"abc","obj":{"inner":{"x":"deep"}},"i32":-1}`})
	})
}

// The original's schema rules: required fields (top level, in objects,
// in arrays' objects) on insert, replace and update; nullable types;
// objects without properties taking any members; an array without items
// holding nothing.
func TestSchemaRequiredNullableFreeForm(t *testing.T) {
	const schema = `{"title":"req","primary_key":["id"],"required":["s"],"properties":{
		"id":{"type":"integer"},"s":{"type":"string"},"n":{"type":["null","string"]},
		"obj":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},
		"arr":{"type":"array","items":{"type":"object","properties":{"id":{"type":"integer"},"p":{"type":"string"}},"required":["id"]}},
		"d":{"type":"object","properties":{}},"empty":{"type":"array","maxItems":0}}}`
	const prefix = "json schema validation failed for field "
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "req", schema)
		for _, tc := range []struct{ doc, msg string }{
			{`{"id":1,"obj":{"name":"bbb"}}`, prefix + "'' reason 'missing properties: 's''"},
			{`{"id":1,"s":null}`, prefix + "'s' reason 'expected string, but got null'"},
			{`{"id":1,"s":"a","obj":{}}`, prefix + "'obj' reason 'missing properties: 'name''"},
			{`{"id":1,"s":"a","arr":[{"p":"foo"}]}`, prefix + "'arr/0' reason 'missing properties: 'id''"},
			{`{"id":1,"s":"a","n":1}`, prefix + "'n' reason 'expected string or null, but got number'"},
			{`{"id":1,"s":"a","empty":[1,1]}`, prefix + "'empty' reason 'maximum 0 items required, but found 2 items'"},
		} {
			wantError(t, c.do(t, "POST", docPath("db1", "req", "insert"), `{"documents":[`+tc.doc+`]}`), 400, "INVALID_ARGUMENT", tc.msg)
			wantError(t, c.do(t, "PUT", docPath("db1", "req", "replace"), `{"documents":[`+tc.doc+`]}`), 400, "INVALID_ARGUMENT", tc.msg)
		}
		if got := c.all(t, "db1", "req"); len(got) != 0 {
			t.Fatalf("invalid documents stored: %q", got)
		}
		doc := `{"id":1,"s":"a","n":null,"obj":{"name":"x"},"arr":[{"id":1}],"d":{"f1":"A","f2":{"g":[1,null]}},"empty":[]}`
		c.insert(t, "db1", "req", doc)
		update := func(fields string) *response {
			return c.do(t, "PUT", docPath("db1", "req", "update"), `{"filter":{"id":1},"fields":`+fields+`}`)
		}
		wantError(t, update(`{"$set":{"s":null}}`), 400, "INVALID_ARGUMENT", prefix+"'s' reason 'expected string, but got null'")
		wantError(t, update(`{"$unset":["s"]}`), 400, "INVALID_ARGUMENT", prefix+"'' reason 'missing properties: 's''")
		wantError(t, update(`{"$unset":["obj.name"]}`), 400, "INVALID_ARGUMENT", prefix+"'obj' reason 'missing properties: 'name''")
		equalStrings(t, "unchanged", c.all(t, "db1", "req"), []string{doc})
		c.ok(t, "PUT", docPath("db1", "req", "replace"), `{"documents":[{"id":1,"s":"b","d":{"any":{"thing":true}}}]}`)
		equalStrings(t, "replaced", c.all(t, "db1", "req"), []string{`{"id":1,"s":"b","d":{"any":{"thing":true}}}`})
		// An update sets any value inside a free-form object.
		c.ok(t, "PUT", docPath("db1", "req", "update"), `{"filter":{"id":1},"fields":{"$set":{"d.f1":"updated_A","d.any.thing":[1]}}}`)
		equalStrings(t, "updated", c.all(t, "db1", "req"), []string{`{"id":1,"s":"b","d":{"any":{"thing":[1]},"f1":"updated_A"}}`})
		// Two non-null types are refused.
		wantError(t, c.do(t, "POST", collPath("db1", "two", "createOrUpdate"),
			`{"schema":{"title":"two","properties":{"addr":{"type":["null","string","object"]}}}}`),
			400, "INVALID_ARGUMENT", "only one non-null type allowed for the field 'addr'")
	})
}

// With the header Tigris-Schema-Sign-Off: true, an insert or replace
// keeps the members the schema does not know: stored, read back, neither
// indexed nor queryable, and no obstacle to a later update. What the
// schema declares is still checked.
func TestSchemaSignOff(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "so", `{"title":"so","primary_key":["id"],"properties":{"id":{"type":"integer"},"s":{"type":"string"},"o":{"type":"object","properties":{"a":{"type":"integer"}}}}}`)
		signedOff := func(op, doc string) *response {
			method := "POST"
			if op == "replace" {
				method = "PUT"
			}
			req, err := http.NewRequest(method, c.base+docPath("db1", "so", op), strings.NewReader(`{"documents":[`+doc+`]}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Tigris-Schema-Sign-Off", "true")
			return c.doRequest(t, req)
		}
		doc := `{"id":1,"s":"foo","extra_field":"bar","o":{"a":1,"more":[1,{"x":null}]}}`
		wantError(t, c.do(t, "POST", docPath("db1", "so", "insert"), `{"documents":[`+doc+`]}`), 400, "INVALID_ARGUMENT",
			"json schema validation failed for field '' reason 'additionalProperties 'extra_field' not allowed'")
		if r := signedOff("insert", doc); r.status != 200 {
			t.Fatalf("signed-off insert: %s", r)
		}
		equalStrings(t, "stored", c.all(t, "db1", "so"), []string{doc})
		wantError(t, signedOff("insert", `{"id":2,"s":1}`), 400, "INVALID_ARGUMENT",
			"json schema validation failed for field 's' reason 'expected string or null, but got number'")
		wantError(t, c.do(t, "POST", docPath("db1", "so", "read"), `{"filter":{"extra_field":"bar"}}`), 400, "INVALID_ARGUMENT", "querying on non schema field 'extra_field'")
		c.ok(t, "PUT", docPath("db1", "so", "update"), `{"filter":{"id":1},"fields":{"$set":{"s":"baz"}}}`)
		equalStrings(t, "updated", c.all(t, "db1", "so"), []string{`{"id":1,"s":"baz","extra_field":"bar","o":{"a":1,"more":[1,{"x":null}]}}`})
		wantError(t, c.do(t, "PUT", docPath("db1", "so", "update"), `{"filter":{"id":1},"fields":{"$set":{"extra_field":"x"}}}`), 400, "INVALID_ARGUMENT", anyMessage)
		if r := signedOff("replace", `{"id":1,"other":true}`); r.status != 200 {
			t.Fatalf("signed-off replace: %s", r)
		}
		equalStrings(t, "replaced", c.all(t, "db1", "so"), []string{`{"id":1,"other":true}`})
	})
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// autoGenerate fills a key field that is absent or zero, with a value of
// the field's type, and returns it in keys.
func TestAutoGenerate(t *testing.T) {
	for _, tc := range []struct {
		name, def string
		zero      string // the type's zero value, which is generated over too
		check     func(t *testing.T, key any)
	}{
		{"int64", `{"type":"integer","autoGenerate":true}`, `0`, func(t *testing.T, key any) {
			if n, err := key.(json.Number).Int64(); err != nil || n <= 0 {
				t.Errorf("int64 key %v", key)
			}
		}},
		{"string", `{"type":"string","autoGenerate":true}`, `""`, func(t *testing.T, key any) {
			if s, _ := key.(string); !uuidPattern.MatchString(s) {
				t.Errorf("string key %v is not a UUID", key)
			}
		}},
		{"uuid", `{"type":"string","format":"uuid","autoGenerate":true}`, `"00000000-0000-0000-0000-000000000000"`, func(t *testing.T, key any) {
			if s, _ := key.(string); !uuidPattern.MatchString(s) {
				t.Errorf("uuid key %v is not a UUID", key)
			}
		}},
		{"date-time", `{"type":"string","format":"date-time","autoGenerate":true}`, `"0001-01-01T00:00:00Z"`, func(t *testing.T, key any) {
			s, _ := key.(string)
			if ts, err := time.Parse(time.RFC3339Nano, s); err != nil || time.Since(ts) > time.Hour {
				t.Errorf("date-time key %v is not the time now in RFC 3339", key)
			}
		}},
		{"byte", `{"type":"string","format":"byte","autoGenerate":true}`, `""`, func(t *testing.T, key any) {
			s, _ := key.(string)
			if b, err := base64.StdEncoding.DecodeString(s); err != nil || !uuidPattern.MatchString(string(b)) {
				t.Errorf("byte key %v is not the base64 of a UUID", key)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, c *client) {
				c.createDB(t, "db1")
				c.createColl(t, "db1", "gen", `{"title":"gen","properties":{"k":`+tc.def+`,"n":{"type":"integer"}},"primary_key":["k"]}`)
				m := c.okObject(t, "POST", docPath("db1", "gen", "insert"), `{"documents":[{"n":1},{"n":2},{"k":`+tc.zero+`,"n":3}]}`)
				keys := m["keys"].([]any)
				seen := map[string]bool{}
				for i, k := range keys {
					key := k.(map[string]any)["k"]
					tc.check(t, key)
					seen[fmt.Sprint(key)] = true
					// The stored document carries the generated value.
					var doc map[string]any
					got := c.docs(t, "db1", "gen", fmt.Sprintf(`{"filter":{"n":%d}}`, i+1))
					if len(got) != 1 {
						t.Fatalf("document n=%d: %q", i+1, got)
					}
					dec := json.NewDecoder(strings.NewReader(got[0]))
					dec.UseNumber()
					if err := dec.Decode(&doc); err != nil || fmt.Sprint(doc["k"]) != fmt.Sprint(key) {
						t.Errorf("document %s does not carry its key %v", got[0], key)
					}
				}
				if len(seen) != 3 {
					t.Errorf("generated keys are not distinct: %v", keys)
				}
			})
		})
	}
}

// An int32 key counts 1, 2, 3... across requests, from a zero or absent
// value; a value given is kept.
func TestAutoGenerateInt32Counter(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "seq", `{"title":"seq","properties":{"id":{"type":"integer","format":"int32","autoGenerate":true},"v":{"type":"string"}},"primary_key":["id"]}`)
		equalStrings(t, "first", c.insert(t, "db1", "seq", `{"v":"a"}`, `{"v":"b"}`), []string{`{"id":1}`, `{"id":2}`})
		equalStrings(t, "zero", c.insert(t, "db1", "seq", `{"id":0,"v":"c"}`), []string{`{"id":3}`})
		equalStrings(t, "given", c.insert(t, "db1", "seq", `{"id":100,"v":"d"}`), []string{`{"id":100}`})
		equalStrings(t, "documents", c.all(t, "db1", "seq"), []string{`{"v":"a","id":1}`, `{"v":"b","id":2}`, `{"id":3,"v":"c"}`, `{"id":100,"v":"d"}`})
		// A failed insert does not leave its numbers taken... or if it does,
		// they are never reused; either way keys stay unique and growing.
		wantError(t, c.do(t, "POST", docPath("db1", "seq", "insert"), `{"documents":[{"v":"e"},{"v":5}]}`), 400, "INVALID_ARGUMENT", anyMessage)
		next := c.insert(t, "db1", "seq", `{"v":"f"}`)
		if next[0] != `{"id":4}` && next[0] != `{"id":5}` {
			t.Errorf("after a failed insert: %v", next)
		}
	})
}

// Without primary_key, the schema gets the key "id", and an "id" field of
// type uuid with autoGenerate unless it has one of its own.
func TestDefaultPrimaryKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "auto", `{"title":"auto","properties":{"name":{"type":"string"}}}`)
		desc := c.okObject(t, "POST", collPath("db1", "auto", "describe"), "")
		schema, _ := json.Marshal(desc["schema"])
		wantSameJSON(t, "stored schema", string(schema), `{"title":"auto","properties":{"name":{"type":"string"},"id":{"type":"string","format":"uuid","autoGenerate":true}},"primary_key":["id"]}`)
		keys := c.insert(t, "db1", "auto", `{"name":"x"}`)
		var k struct{ ID string }
		if len(keys) != 1 || json.Unmarshal([]byte(keys[0]), &k) != nil || !uuidPattern.MatchString(k.ID) {
			t.Errorf("keys %v, want one generated uuid id", keys)
		}

		// An id of its own keeps its type, and is usable in ranges.
		c.createColl(t, "db1", "autoint", `{"title":"autoint","properties":{"id":{"type":"integer"},"n":{"type":"string"}}}`)
		c.insert(t, "db1", "autoint", `{"id":5}`, `{"id":2}`, `{"id":9}`)
		equalStrings(t, "range on id", c.docs(t, "db1", "autoint", `{"filter":{"id":{"$gt":3}}}`), []string{`{"id":5}`, `{"id":9}`})
		wantError(t, c.do(t, "POST", docPath("db1", "autoint", "insert"), `{"documents":[{"n":"x"}]}`),
			400, "INVALID_ARGUMENT", "missing index key column(s) 'id': Key path not found")
	})
}

func TestCompositePrimaryKey(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		c.createColl(t, "db1", "comp", `{"title":"comp","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"string"}},"primary_key":["b","a"]}`)
		equalStrings(t, "keys", c.insert(t, "db1", "comp", `{"a":"y","b":1}`, `{"a":"x","b":2}`, `{"c":"z","a":"x","b":1}`),
			[]string{`{"b":1,"a":"y"}`, `{"b":2,"a":"x"}`, `{"b":1,"a":"x"}`})
		wantError(t, c.do(t, "POST", docPath("db1", "comp", "insert"), `{"documents":[{"a":"x","b":1}]}`), 409, "ALREADY_EXISTS", `duplicate key value, violates key constraint: key {"b":1,"a":"x"} exists already`)
		// Key order: b, then a.
		equalStrings(t, "order", c.all(t, "db1", "comp"), []string{`{"c":"z","a":"x","b":1}`, `{"a":"y","b":1}`, `{"a":"x","b":2}`})
		equalStrings(t, "whole key", c.docs(t, "db1", "comp", `{"filter":{"a":"x","b":2}}`), []string{`{"a":"x","b":2}`})
		equalStrings(t, "part of the key", c.docs(t, "db1", "comp", `{"filter":{"a":"x"}}`), []string{`{"c":"z","a":"x","b":1}`, `{"a":"x","b":2}`})
		c.ok(t, "PUT", docPath("db1", "comp", "update"), `{"filter":{"$and":[{"b":1},{"a":"y"}]},"fields":{"$set":{"c":"w"}}}`)
		equalStrings(t, "updated by whole key", c.docs(t, "db1", "comp", `{"filter":{"c":"w"}}`), []string{`{"a":"y","b":1,"c":"w"}`})
		wantError(t, c.do(t, "POST", docPath("db1", "comp", "insert"), `{"documents":[{"b":3}]}`), 400, "INVALID_ARGUMENT", "missing index key column(s) 'a': Key path not found")
	})
}

func TestMessagesCollection(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client) {
		c.createDB(t, "db1")
		r := c.ok(t, "POST", collPath("db1", "events", "createOrUpdate"), `{"schema":{"title":"events","collection_type":"messages","properties":{"text":{"type":"string"}}}}`)
		if got := string(r.body); got != `{"message":"collection of type 'messages' created successfully","status":"created"}` {
			t.Errorf("create: %s", got)
		}
		// No key is added to a messages schema, and none may be given.
		desc := c.okObject(t, "POST", collPath("db1", "events", "describe"), "")
		schema, _ := json.Marshal(desc["schema"])
		wantSameJSON(t, "stored schema", string(schema), `{"title":"events","collection_type":"messages","properties":{"text":{"type":"string"}}}`)
		wantError(t, c.do(t, "POST", collPath("db1", "keyed", "createOrUpdate"), `{"schema":{"title":"keyed","collection_type":"messages","properties":{"k":{"type":"string"}},"primary_key":["k"]}}`),
			400, "INVALID_ARGUMENT", "setting primary key is not supported for messages collection")
		// Read works on both types (document operations are refused: see
		// TestErrorMessages).
		if r := c.ok(t, "POST", docPath("db1", "events", "read"), `{"filter":{}}`); len(r.body) != 0 {
			t.Errorf("read of an empty messages collection: %q", r.body)
		}
	})
}

// Schemas that cannot be parsed are refused, and no collection is created.
func TestSchemaParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, schema, message string }{
		{"title differs", `{"title":"other","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`, "collection name is not same as schema name 'coll' 'other'"},
		{"no title", `{"properties":{"id":{"type":"integer"}},"primary_key":["id"]}`, "collection name is not same as schema name 'coll' ''"},
		{"not an object", `[1]`, anyMessage},
		{"unknown type", `{"title":"coll","properties":{"id":{"type":"int"}},"primary_key":["id"]}`, anyMessage},
		{"unknown format", `{"title":"coll","properties":{"id":{"type":"string","format":"email"}},"primary_key":["id"]}`, anyMessage},
		{"unsupported property key", `{"title":"coll","properties":{"id":{"type":"integer","minimum":1}},"primary_key":["id"]}`, anyMessage},
		{"array without items", `{"title":"coll","properties":{"id":{"type":"integer"},"a":{"type":"array"}},"primary_key":["id"]}`, anyMessage},
		{"autoGenerate off the key", `{"title":"coll","properties":{"id":{"type":"integer"},"n":{"type":"integer","autoGenerate":true}},"primary_key":["id"]}`, anyMessage},
		{"key field missing", `{"title":"coll","properties":{"id":{"type":"integer"}},"primary_key":["nope"]}`, anyMessage},
		{"number key", `{"title":"coll","properties":{"id":{"type":"number"}},"primary_key":["id"]}`, anyMessage},
		{"object key", `{"title":"coll","properties":{"id":{"type":"object"}},"primary_key":["id"]}`, anyMessage},
		{"bad collection type", `{"title":"coll","collection_type":"tables","properties":{"id":{"type":"integer"}},"primary_key":["id"]}`, anyMessage},
		{"maxLength on an integer", `{"title":"coll","properties":{"id":{"type":"integer","maxLength":3}},"primary_key":["id"]}`, anyMessage},
		{"no properties", `{"title":"coll","primary_key":["id"]}`, anyMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, c *client) {
				c.createDB(t, "db1")
				wantError(t, c.do(t, "POST", collPath("db1", "coll", "createOrUpdate"), `{"schema":`+tc.schema+`}`), 400, "INVALID_ARGUMENT", tc.message)
				if got := string(c.ok(t, "POST", dbPath("db1", "collections/list"), "").body); got != `{"collections":[]}` {
					t.Errorf("a collection was created: %s", got)
				}
			})
		})
	}
}

// Schema changes through createOrUpdate: compatible ones apply at once,
// incompatible ones are refused with 400 and change nothing.
func TestSchemaEvolution(t *testing.T) {
	const base = `{"title":"evo","properties":{"id":{"type":"integer"},"name":{"type":"string","maxLength":10},"obj":{"type":"object","properties":{"x":{"type":"integer"}}},"tags":{"type":"array","items":{"type":"string"}}},"primary_key":["id"]}`
	for _, tc := range []struct {
		name     string
		from, to string // replaced in base
		refusal  string // for a refused change: what its message names
		newDoc   string // allowed: a document only the new schema accepts
	}{
		{"add a field", `"tags":`, `"age":{"type":"integer"},"tags":`, "", `{"id":2,"age":3}`},
		{"add a nested field", `"x":{"type":"integer"}`, `"x":{"type":"integer"},"y":{"type":"string"}`, "", `{"id":2,"obj":{"y":"s"}}`},
		{"grow maxLength", `"maxLength":10`, `"maxLength":20`, "", `{"id":2,"name":"fifteen chars.."}`},
		{"drop maxLength", `,"maxLength":10`, ``, "", `{"id":2,"name":"a name longer than ten"}`},
		{"change description", `"title":"evo",`, `"title":"evo","description":"now described",`, "", ``},
		{"change a type", `"name":{"type":"string","maxLength":10}`, `"name":{"type":"integer"}`, "'name'", ""},
		{"change a format", `"id":{"type":"integer"}`, `"id":{"type":"integer","format":"int32"}`, "'id'", ""},
		{"change a nested type", `"x":{"type":"integer"}`, `"x":{"type":"number"}`, "'obj.x'", ""},
		{"change array items", `"items":{"type":"string"}`, `"items":{"type":"integer"}`, "'tags[]'", ""},
		{"remove a field", `,"tags":{"type":"array","items":{"type":"string"}}`, ``, "'tags'", ""},
		{"remove a nested field", `"properties":{"x":{"type":"integer"}}`, `"properties":{"z":{"type":"integer"}}`, "'obj.x'", ""},
		{"change the key", `"primary_key":["id"]`, `"primary_key":["id","name"]`, "'name'", ""},
		{"shrink maxLength", `"maxLength":10`, `"maxLength":5`, "'name'", ""},
		{"add maxLength", `"tags":{"type":"array","items":{"type":"string"}}`, `"tags":{"type":"array","items":{"type":"string","maxLength":3}}`, "'tags[]'", ""},
		{"become messages", `"title":"evo",`, `"title":"evo","collection_type":"messages",`, "messages collection", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := strings.Replace(base, tc.from, tc.to, 1)
			if next == base {
				t.Fatalf("the case does not change the schema")
			}
			refused := tc.refusal != ""
			eachBackend(t, func(t *testing.T, c *client) {
				c.createDB(t, "db1")
				c.createColl(t, "db1", "evo", base)
				c.insert(t, "db1", "evo", `{"id":1,"name":"ten chars.","obj":{"x":1},"tags":["a"]}`)
				before := c.snapshot(t)
				r := c.do(t, "POST", collPath("db1", "evo", "createOrUpdate"), `{"schema":`+next+`}`)
				if refused {
					msg := wantError(t, r, 400, "INVALID_ARGUMENT", anyMessage)
					if !strings.Contains(msg, tc.refusal) {
						t.Errorf("message %q does not name %s", msg, tc.refusal)
					}
					if after := c.snapshot(t); after != before {
						t.Errorf("a refused change changed something:\nbefore %s\nafter  %s", before, after)
					}
					return
				}
				if r.status != 200 {
					t.Fatalf("allowed change refused: %s", r)
				}
				var desc struct{ Schema json.RawMessage }
				if err := json.Unmarshal(c.ok(t, "POST", collPath("db1", "evo", "describe"), "").body, &desc); err != nil || string(desc.Schema) != next {
					t.Errorf("described schema %s, want %s", desc.Schema, next)
				}
				equalStrings(t, "old documents", c.all(t, "db1", "evo"), []string{`{"id":1,"name":"ten chars.","obj":{"x":1},"tags":["a"]}`})
				if tc.newDoc != "" {
					// The new schema applies from the next request on.
					c.insert(t, "db1", "evo", tc.newDoc)
				}
			})
		})
	}
}
