package schemagen

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/ from the generators' output")

// cases are the schemas every generator test runs over: between them every
// type and format, nesting, arrays of scalars, of objects and of arrays,
// composite and generated keys, descriptions, and names that need case
// conversion, quoting or renaming. The collection name is the title.
var cases = []struct {
	name, schema string
}{
	{"types", `{"title":"products","properties":{
		"id":{"type":"integer","format":"int32"},
		"count":{"type":"integer"},
		"big":{"type":"integer","format":"int64"},
		"price":{"type":"number"},
		"in_stock":{"type":"boolean"},
		"name":{"type":"string","maxLength":100},
		"photo":{"type":"string","format":"byte"},
		"thumb":{"type":"string","contentEncoding":"base64"},
		"sku":{"type":"string","format":"uuid"},
		"added_at":{"type":"string","format":"date-time"},
		"tags":{"type":"array","items":{"type":"string"}},
		"scores":{"type":"array","items":{"type":"number"}},
		"flags":{"type":"array","items":{"type":"boolean"}},
		"blobs":{"type":"array","items":{"type":"string","format":"byte"}},
		"matrix":{"type":"array","items":{"type":"array","items":{"type":"integer","format":"int32"}}},
		"attrs":{"type":"object"}
	},"primary_key":["id"]}`},
	{"keys", `{"title":"order_lines","description":"One line of an order.","properties":{
		"order_id":{"type":"integer","description":"The order this line is part of.","autoGenerate":true},
		"line":{"type":"integer","format":"int32"},
		"ref":{"type":"string","format":"uuid","autoGenerate":true},
		"note":{"type":"string","description":"Free text.\nSecond line; a \\u000a and a */ stay inert.\r\nThird \"quoted\" line."}
	},"primary_key":["order_id","line","ref"]}`},
	{"default_key", `{"title":"events","properties":{"kind":{"type":"string"}}}`},
	{"nested", `{"title":"users","properties":{
		"id":{"type":"string","format":"date-time"},
		"address":{"type":"object","description":"Where the user lives.","properties":{
			"street":{"type":"string"},
			"geo":{"type":"object","properties":{"lat":{"type":"number"},"lng":{"type":"number"}}}}},
		"work_address":{"type":"object","description":"Where the user lives.","properties":{
			"street":{"type":"string"},
			"geo":{"type":"object","properties":{"lat":{"type":"number"},"lng":{"type":"number"}}}}},
		"orders":{"type":"array","items":{"type":"object","properties":{
			"order_id":{"type":"integer"},
			"items":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string","format":"uuid"},"qty":{"type":"integer","format":"int32"}}}}}}},
		"user":{"type":"object","properties":{"nick":{"type":"string"}}},
		"empty":{"type":"object","properties":{}},
		"categories":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}},
		"array":{"type":"object","properties":{"x":{"type":"integer"}}}
	},"primary_key":["id"]}`},
	{"names", `{"title":"people","properties":{
		"ID":{"type":"string","format":"byte"},
		"user_name":{"type":"string"},
		"userName":{"type":"string"},
		"first-name":{"type":"string"},
		"class":{"type":"boolean"},
		"Class":{"type":"string"},
		"o":{"type":"integer"},
		"other":{"type":"number"},
		"3d":{"type":"boolean"},
		"uUID1":{"type":"string","format":"uuid"},
		"has space":{"type":"string"},
		"名前":{"type":"string"},
		"back` + "`" + `tick":{"type":"string"}
	},"primary_key":["ID"]}`},
	{"messages", `{"title":"order_events","collection_type":"messages","properties":{
		"order":{"type":"integer"},"status":{"type":"string"}}}`},
}

func parseCase(t testing.TB, name, raw string) *schema.Schema {
	t.Helper()
	start := strings.Index(raw, `"title":"`) + len(`"title":"`)
	coll := raw[start : start+strings.IndexByte(raw[start:], '"')]
	s, err := schema.Parse(coll, []byte(raw))
	if err != nil {
		t.Fatalf("case %s: parse its schema: %v", name, err)
	}
	return s
}

var extensions = map[Format]string{Go: "go.txt", TypeScript: "ts.txt", Java: "java.txt"}

// TestGenerateGolden compares each generator's output with the golden
// files of testdata/, which were read line by line when written (go test
// -update rewrites them); the compile tests check the same output builds.
func TestGenerateGolden(t *testing.T) {
	for _, c := range cases {
		s := parseCase(t, c.name, c.schema)
		for f, ext := range extensions {
			t.Run(c.name+"/"+string(f), func(t *testing.T) {
				got := Generate(s, f, Style2022)
				path := filepath.Join("testdata", c.name+"."+ext)
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (go test -update writes it)", err)
				}
				if got != string(want) {
					t.Errorf("output differs from %s:\n%s", path, lineDiff(string(want), got))
				}
			})
		}
	}
}

// lineDiff shows the first lines where two texts differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(same lines)"
}

func TestParseFormats(t *testing.T) {
	tests := []struct {
		in      string
		want    []Request
		bad     bool   // an *UnknownFormatError...
		unknown string // ...naming this
	}{
		{in: "", want: nil},
		{in: "  ", want: nil},
		{in: "go", want: []Request{{"go", Go}}},
		{in: "ts", want: []Request{{"ts", TypeScript}}},
		{in: "java", want: []Request{{"java", Java}}},
		{in: "go,ts", want: []Request{{"go", Go}, {"ts", TypeScript}}},
		{in: " go , java ", want: []Request{{"go", Go}, {"java", Java}}},
		{in: "golang,typescript", want: []Request{{"golang", Go}, {"typescript", TypeScript}}},
		{in: "GO,Ts", want: []Request{{"GO", Go}, {"Ts", TypeScript}}},
		{in: "go,go,ts,go", want: []Request{{"go", Go}, {"ts", TypeScript}}},
		{in: "go,ts,java", want: []Request{{"go", Go}, {"ts", TypeScript}, {"java", Java}}},
		{in: "xml", bad: true, unknown: "xml"},
		{in: "go,python", bad: true, unknown: "python"},
		{in: "go,", bad: true, unknown: ""},
		{in: ",go", bad: true, unknown: ""},
		{in: "go;ts", bad: true, unknown: "go;ts"},
		{in: "json", bad: true, unknown: "json"},
	}
	for _, tt := range tests {
		got, err := ParseFormats(tt.in)
		if tt.bad {
			var uf *UnknownFormatError
			if !errors.As(err, &uf) || uf.Name != tt.unknown {
				t.Errorf("ParseFormats(%q) = %v, %v; want an unknown format %q", tt.in, got, err, tt.unknown)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseFormats(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	err := &UnknownFormatError{Name: "xml"}
	if want := "unsupported schema format 'xml'. supported formats are: go, ts, java"; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"id": "Id", "ID": "ID", "user_name": "UserName", "userName": "UserName", "first-name": "FirstName",
		"field_3": "Field3", "uUID1": "UUID1", "a1b": "A1B", "has space": "HasSpace", "__x__": "X",
		"3d": "3D", "名前": "名前", "é_t": "ÉT", "": "", "$": "",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"3d": "X3D", "名前": "X名前", "": "X", "$$": "X", "user": "User"} {
		if got := exported(in); got != want {
			t.Errorf("exported(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSingular(t *testing.T) {
	for in, want := range map[string]string{
		"users": "user", "categories": "category", "addresses": "address", "boxes": "box",
		"matches": "match", "dishes": "dish", "heroes": "hero", "people": "person",
		"children": "child", "order_items": "order_item", "OrderItems": "OrderItem",
		"USERS": "USER", "CATEGORIES": "CATEGORY", "status": "status", "statuses": "status",
		"class": "class", "analysis": "analysis", "data": "data", "metadata": "metadata",
		"user": "user", "news": "news", "movies": "movie", "series": "series", "days": "day",
		"keys": "key", "is": "is", "us": "us", "bus": "bus", "items2": "items2", "leaves": "leaf",
		"user_people": "user_person", "aliases": "alias", "quizzes": "quiz",
	} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"users": "User", "order_items": "OrderItem", "people": "Person", "addresses": "Address"} {
		if got := typeName(in); got != want {
			t.Errorf("typeName(%q) = %q, want %q", in, got, want)
		}
	}
}
