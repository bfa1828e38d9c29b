package schemagen

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/npmtest"
	"github.com/foliodb/folio/tests/testenv"
)

// The compile tests put each case's output in a file with the header a
// user (or the tigris CLI) would give it, and have the language's own
// compiler check it: go vet, tsc against the published TypeScript client's
// types, javac against stubs of the Java client's annotations. Each case
// gets a package (or module file) of its own, as its type names may
// repeat another case's.

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// compileUnit is one text to compile: a case's output in one style, in a
// package (or directory) of its own.
type compileUnit struct {
	pkg string
	src string
}

// compileUnits are the outputs in format f the compile tests build: every
// case's in both styles, and the Final text of beta.122's test schemas.
func compileUnits(t *testing.T, f Format) []compileUnit {
	var out []compileUnit
	for _, c := range cases {
		s := parseCase(t, c.name, c.schema)
		out = append(out, compileUnit{c.name, Generate(s, f, Style2022)}, compileUnit{"final_" + c.name, Generate(s, f, Final)})
	}
	for _, c := range beta122Cases {
		out = append(out, compileUnit{"beta122_" + c.name, Generate(beta122Schema(t, c.name, c.collection), f, Final)})
	}
	return out
}

// TestGoOutputCompiles vets the Go output of every case in a module of
// its own. github.com/google/uuid is replaced by a local stub, so that no
// network is needed; vet type-checks the structs and checks their tags.
func TestGoOutputCompiles(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), "module example.com/models\n\ngo 1.21\n\n"+
		"require github.com/google/uuid v1.3.0\n\nreplace github.com/google/uuid => ./uuidstub\n")
	writeFile(t, filepath.Join(dir, "uuidstub", "go.mod"), "module github.com/google/uuid\n\ngo 1.21\n")
	writeFile(t, filepath.Join(dir, "uuidstub", "uuid.go"), "// Package uuid stands in for github.com/google/uuid.\npackage uuid\n\n// UUID is the real package's type.\ntype UUID [16]byte\n")
	for _, u := range compileUnits(t, Go) {
		src := u.src
		// The imports the CLI's header adds when the text uses them.
		var imports []string
		if strings.Contains(src, "time.Time") {
			imports = append(imports, `"time"`)
		}
		if strings.Contains(src, "uuid.UUID") {
			imports = append(imports, `"github.com/google/uuid"`)
		}
		header := "package " + u.pkg + "\n"
		if len(imports) > 0 {
			header += "\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n"
		}
		writeFile(t, filepath.Join(dir, u.pkg, "models.go"), header+src)
	}
	env := []string{"GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local"}
	run(t, dir, env, goTool, "vet", "./...")
}

// What the TypeScript output is type-checked with (testdata/tsc, whose
// lockfile pins the tree): the supported client, 1.0.0-beta.21 of
// @tigrisdata/core, for its types; TypeScript 4.9 of the same weeks; and
// Node's types of those weeks too, as the client's dependencies reference
// them and today's @types/node cannot be parsed by TypeScript 4.9.
const (
	tsTypesPath  = "@tigrisdata/core/dist/types"
	tsInstallEnv = "FOLIO_SCHEMAGEN_NPM_DIR" // a directory with the project installed, to skip npm
)

// TestTypeScriptOutputTypeChecks runs tsc --noEmit, strict, over every
// case's TypeScript output with the client's TigrisCollectionType,
// TigrisDataTypes and TigrisSchema imported as its generated code did.
// TigrisSchema<T> maps every property of T, so this checks that each
// interface and its schema constant agree field for field, and that each
// primary_key is what the client accepts. It needs npm and the registry
// once per machine (the install is cached in the user cache directory) and
// skips, saying why, without them.
func TestTypeScriptOutputTypeChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package: not in -short")
	}
	modules := tsInstall(t)
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(modules, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, c := range cases {
		src := Generate(parseCase(t, c.name, c.schema), TypeScript, Style2022)
		header := "import { TigrisCollectionType, TigrisDataTypes, TigrisSchema } from \"" + tsTypesPath + "\";\n"
		writeFile(t, filepath.Join(dir, c.name+".ts"), header+src)
		files = append(files, c.name+".ts")
	}
	// skipLibCheck: the client's own declarations are not what is tested.
	config, _ := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{
			"strict": true, "noEmit": true, "skipLibCheck": true,
			"target": "es2020", "module": "commonjs", "moduleResolution": "node",
		},
		"files": files,
	})
	writeFile(t, filepath.Join(dir, "tsconfig.json"), string(config))
	run(t, dir, nil, filepath.Join(modules, "node_modules", ".bin", "tsc"), "-p", dir)
}

// tsInstall returns a directory whose node_modules holds the client and
// the compiler, installing them the first time (npmtest: skipped without
// npm or the registry, failed under CI).
func tsInstall(t *testing.T) string {
	t.Helper()
	return npmtest.Install(t, npmtest.Project{Name: "schemagen", Dir: filepath.Join("testdata", "tsc"),
		Ready: filepath.Join(".bin", "tsc"), Env: tsInstallEnv})
}

// javaStubs stand in for the Java client's annotations and collection
// type, declared as the client declares them (com.tigrisdata.db.annotation
// and .type), and Jackson's JsonProperty.
var javaStubs = map[string]string{
	"com/tigrisdata/db/annotation/TigrisCollection.java": `package com.tigrisdata.db.annotation;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME) @Target({ElementType.TYPE})
public @interface TigrisCollection { String value(); }
`,
	"com/tigrisdata/db/annotation/TigrisField.java": `package com.tigrisdata.db.annotation;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME) @Target({ElementType.FIELD})
public @interface TigrisField { String description() default ""; }
`,
	"com/tigrisdata/db/annotation/TigrisPrimaryKey.java": `package com.tigrisdata.db.annotation;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME) @Target({ElementType.FIELD})
public @interface TigrisPrimaryKey { int order(); boolean autoGenerate() default false; }
`,
	"com/tigrisdata/db/type/TigrisCollectionType.java": `package com.tigrisdata.db.type;
public interface TigrisCollectionType {}
`,
	"com/fasterxml/jackson/annotation/JsonProperty.java": `package com.fasterxml.jackson.annotation;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME) @Target({ElementType.FIELD, ElementType.METHOD, ElementType.PARAMETER})
public @interface JsonProperty { String value() default ""; }
`,
}

const javaHeader = `import java.util.Arrays;
import java.util.Date;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import com.tigrisdata.db.annotation.TigrisCollection;
import com.tigrisdata.db.annotation.TigrisField;
import com.tigrisdata.db.annotation.TigrisPrimaryKey;
import com.tigrisdata.db.type.TigrisCollectionType;
`

var publicClass = regexp.MustCompile(`(?m)^public class (\S+) `)

// The final server's TypeScript is checked against the final client
// (testdata/tscfinal): @tigrisdata/core 1.3.0, June 2023, the TypeScript
// and Node types of its weeks.
const tsFinalInstallEnv = "FOLIO_SCHEMAGEN_FINAL_NPM_DIR"

// tsFinalHeader imports what the final text uses. The client of June
// 2023 calls Generated GeneratedField.
const tsFinalHeader = `import { Field, PrimaryKey, SearchField, TigrisCollection, TigrisDataTypes, GeneratedField as Generated } from "@tigrisdata/core";
`

// TestTypeScriptFinalOutputTypeChecks runs tsc --noEmit over the Final
// TypeScript text of every case and of beta.122's schemas, against the
// final client's decorators: each decorator's arguments must be what the
// client declares (a data type, options it knows, a class for elements).
// Strict, with the decorators the client needs, but for
// strictPropertyInitialization: the final server declared properties
// without initializers (or "!"), as the client's own examples of the time
// did with that option off.
func TestTypeScriptFinalOutputTypeChecks(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package: not in -short")
	}
	modules := npmtest.Install(t, npmtest.Project{Name: "schemagen-final", Dir: filepath.Join("testdata", "tscfinal"),
		Ready: filepath.Join(".bin", "tsc"), Env: tsFinalInstallEnv})
	dir := t.TempDir()
	if err := os.Symlink(filepath.Join(modules, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, u := range compileUnits(t, TypeScript) {
		if !strings.HasPrefix(u.pkg, "final_") && !strings.HasPrefix(u.pkg, "beta122_") {
			continue // 2022's text: TestTypeScriptOutputTypeChecks
		}
		writeFile(t, filepath.Join(dir, u.pkg+".ts"), tsFinalHeader+u.src)
		files = append(files, u.pkg+".ts")
	}
	config, _ := json.Marshal(map[string]any{
		"compilerOptions": map[string]any{
			"strict": true, "strictPropertyInitialization": false, "noEmit": true, "skipLibCheck": true,
			"experimentalDecorators": true, "emitDecoratorMetadata": true,
			"target": "es2020", "module": "commonjs", "moduleResolution": "node",
		},
		"files": files,
	})
	writeFile(t, filepath.Join(dir, "tsconfig.json"), string(config))
	run(t, dir, nil, filepath.Join(modules, "node_modules", ".bin", "tsc"), "-p", dir)
}

// TestJavaOutputCompiles compiles every case's Java output with javac
// (-Xlint:all -Werror) against stubs of the client's annotations. Without
// a JDK it skips, saying so (fails under CI, which installs one);
// TestJavaOutputShape checks the structure either way.
func TestJavaOutputCompiles(t *testing.T) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		testenv.Missing(t, "javac is not on PATH: the Java output is not compiled (TestJavaOutputShape still checks its structure)")
	}
	dir := t.TempDir()
	var files []string
	for rel, src := range javaStubs {
		writeFile(t, filepath.Join(dir, rel), src)
		files = append(files, rel)
	}
	for _, u := range compileUnits(t, Java) {
		src := u.src
		m := publicClass.FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("%s: no public class in:\n%s", u.pkg, src)
		}
		// A public class lives in the file named after it.
		rel := filepath.Join("models", u.pkg, m[1]+".java")
		writeFile(t, filepath.Join(dir, rel), "package models."+u.pkg+";\n\n"+javaHeader+src)
		files = append(files, rel)
	}
	args := append([]string{"-encoding", "UTF-8", "-Xlint:all", "-Werror", "-d", filepath.Join(dir, "classes")}, files...)
	run(t, dir, nil, javac, args...)
}

// TestJavaOutputShape checks what javac cannot: that each type of the
// model has its class, each field its annotations and accessors; and what
// a reader would check without a JDK: that braces balance.
func TestJavaOutputShape(t *testing.T) {
	for _, c := range cases {
		s := parseCase(t, c.name, c.schema)
		src := Generate(s, Java, Style2022)
		if strings.Count(src, "{") != strings.Count(src, "}") || strings.Count(src, "(") != strings.Count(src, ")") {
			t.Errorf("case %s: unbalanced braces or parentheses:\n%s", c.name, src)
		}
		m := buildModel(s, Style2022, func(n string) bool { return javaReserved[n] })
		for _, ty := range m.Types {
			decl := "class " + ty.Name + " {"
			if ty.Collection != "" {
				decl = "@TigrisCollection(value = \"" + ty.Collection + "\")\npublic class " + ty.Name + " implements TigrisCollectionType {"
			}
			if !strings.Contains(src, decl) {
				t.Errorf("case %s: no %q", c.name, decl)
			}
			for _, f := range ty.Fields {
				if f.KeyOrder > 0 && !strings.Contains(src, "@TigrisPrimaryKey(order = "+strconv.Itoa(f.KeyOrder)) {
					t.Errorf("case %s: key field %s has no @TigrisPrimaryKey", c.name, f.JSON)
				}
				if f.Description != "" && !strings.Contains(src, "@TigrisField(description = "+javaString(f.Description)+")") {
					t.Errorf("case %s: field %s has no @TigrisField with its description", c.name, f.JSON)
				}
			}
		}
		// Every field declared has a getter and a setter.
		for _, fm := range regexp.MustCompile(`(?m)^    private (.+) (\S+);$`).FindAllStringSubmatch(src, -1) {
			typ, id := fm[1], fm[2]
			if !regexp.MustCompile(`public ` + regexp.QuoteMeta(typ) + ` (get|is)\S+\(\) \{\n        return ` + regexp.QuoteMeta(id) + `;`).MatchString(src) {
				t.Errorf("case %s: field %s has no getter", c.name, id)
			}
			if !regexp.MustCompile(`public void set\S+\(` + regexp.QuoteMeta(typ+" "+id) + `\) \{\n        this\.` + regexp.QuoteMeta(id) + ` = ` + regexp.QuoteMeta(id) + `;`).MatchString(src) {
				t.Errorf("case %s: field %s has no setter", c.name, id)
			}
		}
	}
}
