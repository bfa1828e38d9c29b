package documents

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

func TestUpdateOperators(t *testing.T) {
	s, err := schema.Parse("c", []byte(`{"title":"c","primary_key":["id"],"properties":{
		"id":{"type":"integer"},"n":{"type":"integer"},"small":{"type":"integer","format":"int32"},
		"x":{"type":"number"},"s":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},
		"nums":{"type":"array","items":{"type":"integer"}},"o":{"type":"object","properties":{"k":{"type":"integer"}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, doc, fields, want, err string
	}{
		{"increment", `{"id":1,"n":5}`, `{"$increment":{"n":3}}`, `{"id":1,"n":8}`, ""},
		{"decrement", `{"id":1,"n":5}`, `{"$decrement":{"n":7}}`, `{"id":1,"n":-2}`, ""},
		{"multiply", `{"id":1,"n":5}`, `{"$multiply":{"n":-3}}`, `{"id":1,"n":-15}`, ""},
		{"divide truncates", `{"id":1,"n":-7}`, `{"$divide":{"n":2}}`, `{"id":1,"n":-3}`, ""},
		{"whole float operand on an integer", `{"id":1,"n":5}`, `{"$increment":{"n":2.0}}`, `{"id":1,"n":7}`, ""},
		{"whole operand read exactly", `{"id":1,"n":0}`, `{"$increment":{"n":9007199254740993.0}}`, `{"id":1,"n":9007199254740993}`, ""},
		{"exponent operand", `{"id":1,"n":0}`, `{"$increment":{"n":1e3}}`, `{"id":1,"n":1000}`, ""},
		{"exact past 2^53", `{"id":1,"n":9007199254740993}`, `{"$increment":{"n":2}}`, `{"id":1,"n":9007199254740995}`, ""},
		{"number", `{"id":1,"x":1.5}`, `{"$multiply":{"x":3}}`, `{"id":1,"x":4.5}`, ""},
		{"number divide", `{"id":1,"x":1}`, `{"$divide":{"x":4}}`, `{"id":1,"x":0.25}`, ""},
		{"nested", `{"id":1,"o":{"k":1}}`, `{"$increment":{"o.k":1}}`, `{"id":1,"o":{"k":2}}`, ""},
		{"missing stays missing", `{"id":1}`, `{"$increment":{"n":1}}`, `{"id":1}`, ""},
		{"null stays null", `{"id":1,"n":null}`, `{"$increment":{"n":1}}`, `{"id":1,"n":null}`, ""},
		{"set then increment", `{"id":1,"n":1}`, `{"$increment":{"n":1},"$set":{"n":10}}`, `{"id":1,"n":11}`, ""},
		{"several", `{"id":1,"n":1,"x":2}`, `{"$increment":{"n":1},"$divide":{"x":2}}`, `{"id":1,"n":2,"x":1}`, ""},
		{"push", `{"id":1,"tags":["a"]}`, `{"$push":{"tags":"b"}}`, `{"id":1,"tags":["a","b"]}`, ""},
		{"push to empty", `{"id":1,"tags":[ ]}`, `{"$push":{"tags":"b"}}`, `{"id":1,"tags":["b"]}`, ""},
		{"push to missing", `{"id":1}`, `{"$push":{"tags":"b"}}`, `{"id":1,"tags":["b"]}`, ""},
		{"push conforms a 64-bit string", `{"id":1,"nums":[1]}`, `{"$push":{"nums":"2"}}`, `{"id":1,"nums":[1,2]}`, ""},
		{"push after unset", `{"id":1,"tags":["a"]}`, `{"$unset":["tags"],"$push":{"tags":"b"}}`, `{"id":1,"tags":["b"]}`, ""},
		// $unset takes a list of names or, as the original also did, an object whose keys are the names.
		{"unset a list", `{"id":1,"n":1,"s":"a"}`, `{"$unset":["n","s"]}`, `{"id":1}`, ""},
		{"unset an object's keys", `{"id":1,"n":1,"s":"a"}`, `{"$unset":{"n":"","s":1}}`, `{"id":1}`, ""},

		{"divide by zero", `{"id":1,"n":5}`, `{"$divide":{"n":0}}`, "", "division by 0 is not allowed"},
		{"divide a number by zero", `{"id":1,"x":5}`, `{"$divide":{"x":0.0}}`, "", "division by 0 is not allowed"},
		{"fraction on an integer", `{"id":1,"n":5}`, `{"$increment":{"n":1.5}}`, "", "floating operations are not allowed on integer field 'n'"},
		{"not a number", `{"id":1,"n":5}`, `{"$increment":{"n":"1"}}`, "", "$increment of 'n' takes a number"},
		{"string field", `{"id":1,"s":"a"}`, `{"$increment":{"s":1}}`, "", "$increment applies to integer and number fields, and 's' is not one"},
		{"unknown field", `{"id":1}`, `{"$multiply":{"zz":1}}`, "", "$multiply: field 'zz' is not in the schema"},
		{"primary key", `{"id":1}`, `{"$increment":{"id":1}}`, `{"id":2}`, ""}, // the update moves the document
		{"overflow", `{"id":1,"n":9223372036854775807}`, `{"$increment":{"n":1}}`, "", "$increment of 'n' overflows the field: 9223372036854775807 + 1"},
		{"overflow down", `{"id":1,"n":-9223372036854775808}`, `{"$decrement":{"n":1}}`, "", "$decrement of 'n' overflows the field"},
		{"multiply overflow", `{"id":1,"n":4611686018427387904}`, `{"$multiply":{"n":2}}`, "", "$multiply of 'n' overflows the field"},
		{"min over -1", `{"id":1,"n":-9223372036854775808}`, `{"$divide":{"n":-1}}`, "", "$divide of 'n' overflows the field"},
		{"int32 overflow", `{"id":1,"small":2147483647}`, `{"$increment":{"small":1}}`, "", "$increment of 'small' overflows the field"},
		// The edges: the last value that fits is taken, one past it is not.
		{"int32 to its maximum", `{"id":1,"small":2147483646}`, `{"$increment":{"small":1}}`, `{"id":1,"small":2147483647}`, ""},
		{"int32 to its minimum", `{"id":1,"small":-2147483647}`, `{"$decrement":{"small":1}}`, `{"id":1,"small":-2147483648}`, ""},
		{"int32 under its minimum", `{"id":1,"small":-2147483648}`, `{"$decrement":{"small":1}}`, "", "$decrement of 'small' overflows the field"},
		{"int64 to its maximum", `{"id":1,"n":9223372036854775806}`, `{"$increment":{"n":1}}`, `{"id":1,"n":9223372036854775807}`, ""},
		{"-1 times the minimum", `{"id":1,"n":-1}`, `{"$multiply":{"n":-9223372036854775808}}`, "", "$multiply of 'n' overflows the field"},
		{"the minimum times -1", `{"id":1,"n":-9223372036854775808}`, `{"$multiply":{"n":-1}}`, "", "$multiply of 'n' overflows the field"},
		{"the minimum times 1", `{"id":1,"n":-9223372036854775808}`, `{"$multiply":{"n":1}}`, `{"id":1,"n":-9223372036854775808}`, ""},
		{"times -1", `{"id":1,"n":5}`, `{"$multiply":{"n":-1}}`, `{"id":1,"n":-5}`, ""},
		{"-1 times -1", `{"id":1,"n":-1}`, `{"$multiply":{"n":-1}}`, `{"id":1,"n":1}`, ""},
		{"zero times the minimum", `{"id":1,"n":0}`, `{"$multiply":{"n":-9223372036854775808}}`, `{"id":1,"n":0}`, ""},
		{"number overflow", `{"id":1,"x":1e308}`, `{"$multiply":{"x":10}}`, "", "$multiply of 'x' overflows the field"},
		{"push to a non-array", `{"id":1,"s":"a"}`, `{"$push":{"s":"b"}}`, "", "$push applies to array fields, and 's' is not one"},
		{"push of the wrong type", `{"id":1,"tags":[]}`, `{"$push":{"tags":1}}`, "", "json schema validation failed"},
		{"arith takes an object", `{"id":1}`, `{"$increment":["n"]}`, "", "$increment takes an object of fields and numbers"},
		{"unset of a string", `{"id":1}`, `{"$unset":"n"}`, "", "$unset takes an array of field names"},
		{"unset of a number in a list", `{"id":1}`, `{"$unset":[1]}`, "", "$unset takes field names"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := parseUpdate(s, []byte(c.fields))
			var got []byte
			if err == nil {
				got, err = u.apply([]byte(c.doc))
			}
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("%s on %s: %s, %v; want error %q", c.fields, c.doc, got, err, c.err)
				}
				return
			}
			if err != nil || string(got) != c.want {
				t.Fatalf("%s on %s: %s, %v; want %s", c.fields, c.doc, got, err, c.want)
			}
		})
	}
}

// An update changes at most MaxUpdateFields fields: exactly that many are
// taken, one more is refused.
func TestUpdateWidthBound(t *testing.T) {
	props := []string{`"id":{"type":"integer"}`}
	for i := range MaxUpdateFields + 1 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"string"}`, i))
	}
	s, err := schema.Parse("c", []byte(`{"title":"c","primary_key":["id"],"properties":{`+strings.Join(props, ",")+`}}`))
	if err != nil {
		t.Fatal(err)
	}
	set := func(n int) []byte {
		members := make([]string, n)
		for i := range members {
			members[i] = fmt.Sprintf(`"f%d":"x"`, i)
		}
		return []byte(`{"$set":{` + strings.Join(members, ",") + `}}`)
	}
	if _, err := parseUpdate(s, set(MaxUpdateFields)); err != nil {
		t.Errorf("$set of %d fields: %v", MaxUpdateFields, err)
	}
	if _, err := parseUpdate(s, set(MaxUpdateFields+1)); err == nil || !strings.Contains(err.Error(), "update changes more than 256 fields") {
		t.Errorf("$set of %d fields: %v, want refused", MaxUpdateFields+1, err)
	}
}
