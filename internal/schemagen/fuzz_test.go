package schemagen

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"testing"

	"github.com/foliodb/folio/internal/schema"
)

// FuzzGenerate generates every format from any schema Parse accepts. None
// may panic, and the Go output must type-check: every type named once,
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
	f.Add(`{"title":"c","properties":{"x y":{"type":"string"},"x_y":{"type":"string"},"xY":{"type":"string"},"XY":{"type":"string"},"1":{"type":"string"},"_1":{"type":"string"}}}`)
	f.Fuzz(func(t *testing.T, raw string) {
		s, err := schema.Parse("c", []byte(raw))
		if err != nil {
			return
		}
		src := Generate(s, Go, Style2022)
		_ = Generate(s, TypeScript, Style2022)
		_ = Generate(s, Java, Style2022)
		if err := typeCheckGo(src); err != nil {
			t.Fatalf("Go output does not type-check: %v\n%s", err, src)
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
