package schemagen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

// FuzzGenerate generates every format in both styles from any schema
// Parse accepts. None may panic, and the Go output must type-check, its
// struct tags read back as the property names and options: every type named once,
// every field of a struct unique, every identifier valid, whatever the
// property names and descriptions hold. (The TypeScript and Java outputs
// are compiled by the compile tests over the cases; their compilers are
// too slow to run per input.)
func FuzzGenerate(f *testing.F) {
	for _, c := range cases {
		f.Add(c.schema)
	}
	f.Add(`{"title":"c","properties":{"a":{"type":"string","description":"x\u0000y\ufeffz\u2028w"},"A":{"type":"object","properties":{"a_":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"c":{"type":"string"}}}}}}}},"primary_key":["a"]}`)
	f.Add(`{"title":"c","properties":{"c":{"type":"object","properties":{"c":{"type":"object","properties":{"c":{"type":"integer"}}}}}}}`)
	f.Add(`{"title":"c","properties":{"s":{"type":["string","null"],"default":"it's \"q\" \u0060","maxLength":3,"searchIndex":true,"sort":true,"facet":true},"n":{"type":"array","items":{"type":["integer","null"]}},"d":{"type":"string","format":"date-time","default":"now()","createdAt":true,"updatedAt":true}},"primary_key":["s"]}`)
	f.Add(`{"title":"c","properties":{"x y":{"type":"string"},"x_y":{"type":"string"},"xY":{"type":"string"},"XY":{"type":"string"},"1":{"type":"string"},"_1":{"type":"string"}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := schema.Parse("c", []byte(raw))
		if err != nil {
			return
		}
		for _, st := range []Style{Style2022, Final} {
			src := Generate(s, Go, st)
			_ = Generate(s, TypeScript, st)
			_ = Generate(s, Java, st)
			if err := typeCheckGo(src); err != nil {
				t.Fatalf("Go output (style %d) does not type-check: %v\n%s", st, err, src)
			}
			if err := checkGoTags(src); err != nil {
				t.Fatalf("Go output (style %d): %v\n%s", st, err, src)
			}
		}
	})
}

// typeCheckGo type-checks Go output with time and uuid stood in for by
// packages holding the one type each that the output uses.
func typeCheckGo(src string) error {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "models.go", "package models\n\nimport (\n\t\"time\"\n\t\"github.com/google/uuid\"\n)\n\nvar _ time.Time\nvar _ uuid.UUID\n"+src, parser.ParseComments)
	if err != nil {
		return err
	}
	conf := types.Config{Importer: stubImporter{}}
	_, err = conf.Check("models", fset, []*ast.File{file}, nil)
	return err
}

// checkGoTags reads back every struct tag of Go output with
// reflect.StructTag, as the clients do: each must be a well-formed
// key:"value" list (what go vet's structtag check asks).
func checkGoTags(src string) error {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "models.go", "package models\n"+src, 0)
	if err != nil {
		return err
	}
	var bad error
	ast.Inspect(file, func(n ast.Node) bool {
		field, ok := n.(*ast.Field)
		if !ok || field.Tag == nil || bad != nil {
			return true
		}
		tag, err := strconv.Unquote(field.Tag.Value)
		if err != nil {
			bad = err
			return false
		}
		for rest := reflect.StructTag(tag); rest != ""; {
			key, value, n, ok := nextTag(string(rest))
			if !ok {
				bad = fmt.Errorf("malformed struct tag %s", field.Tag.Value)
				return false
			}
			if reflect.StructTag(tag).Get(key) != value {
				bad = fmt.Errorf("tag %s: %s reads back as %q", field.Tag.Value, key, reflect.StructTag(tag).Get(key))
				return false
			}
			rest = reflect.StructTag(strings.TrimLeft(string(rest)[n:], " "))
		}
		return true
	})
	return bad
}

// nextTag reads the first key:"value" pair of a struct tag, n bytes long.
func nextTag(tag string) (key, value string, n int, ok bool) {
	i := strings.Index(tag, `:"`)
	if i <= 0 || strings.ContainsAny(tag[:i], " \"") {
		return "", "", 0, false
	}
	q, err := strconv.QuotedPrefix(tag[i+1:])
	if err != nil {
		return "", "", 0, false
	}
	v, err := strconv.Unquote(q)
	return tag[:i], v, i + 1 + len(q), err == nil
}

type stubImporter struct{}

func (stubImporter) Import(path string) (*types.Package, error) {
	name, typ := path, "UUID"
	if path == "time" {
		typ = "Time"
	} else {
		name = "uuid"
	}
	pkg := types.NewPackage(path, name)
	obj := types.NewTypeName(token.NoPos, pkg, typ, nil)
	types.NewNamed(obj, types.NewStruct(nil, nil), nil)
	pkg.Scope().Insert(obj)
	pkg.MarkComplete()
	return pkg, nil
}

// TestTypeCheckGoCatches checks the fuzz test's checker against output
// that must fail it, so that a checker that accepts everything is caught.
func TestTypeCheckGoCatches(t *testing.T) {
	for _, bad := range []string{
		"type A struct {\n\tX int64\n\tX string\n}\n",
		"type A struct{}\ntype A struct{}\n",
		"type A struct {\n\tB Missing\n}\n",
		"type A struct {\n\t// x\x00y\n}\n",
		"type A struct {\n\t3D bool\n}\n",
	} {
		if typeCheckGo(bad) == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
	if err := typeCheckGo("type A struct {\n\tT time.Time\n\tU uuid.UUID\n}\n"); err != nil {
		t.Errorf("rejected good output: %v", err)
	}
}
