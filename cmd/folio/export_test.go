package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// startOn runs a node over store until the test ends and returns its URL.
func startOn(t *testing.T, store kv.Store) string {
	t.Helper()
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = store
		nc.Addr = "127.0.0.1:0"
		nc.ShutdownTimeout = 5 * time.Second
	}))
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return "http://" + n.Addr().String()
}

// overGRPC is the gRPC URL of a node whose HTTP URL is httpURL: the
// same port serves both.
func overGRPC(httpURL string) string { return "grpc://" + strings.TrimPrefix(httpURL, "http://") }

// collPath is the HTTP API's path of a collection.
func collPath(db, coll string) string {
	return "/v1/databases/" + url.PathEscape(db) + "/collections/" + url.PathEscape(coll)
}

// collectionState is what a server holds of a collection: its schema and
// its items in key order, as stored.
func collectionState(t *testing.T, base, db, coll string) (schema string, items []string) {
	t.Helper()
	var desc struct {
		Schema json.RawMessage `json:"schema"`
	}
	json.Unmarshal(mustCall(t, "POST", base+collPath(db, coll)+"/describe", ""), &desc)
	path := "/documents/read"
	if isMessages(desc.Schema) {
		path = "/messages/read"
	}
	for _, l := range bytes.Split(mustCall(t, "POST", base+collPath(db, coll)+path, `{"filter":{}}`), []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var line struct {
			Result struct {
				Data json.RawMessage `json:"data"`
			} `json:"result"`
		}
		if err := json.Unmarshal(l, &line); err != nil {
			t.Fatalf("read line %s: %v", l, err)
		}
		items = append(items, string(line.Result.Data))
	}
	return string(desc.Schema), items
}

func sameDatabase(t *testing.T, from, to, db string, colls ...string) {
	t.Helper()
	for _, c := range colls {
		s1, d1 := collectionState(t, from, db, c)
		s2, d2 := collectionState(t, to, db, c)
		if s1 != s2 {
			t.Errorf("%s: schema\n%s\nbecame\n%s", c, s1, s2)
		}
		if len(d1) != len(d2) {
			t.Errorf("%s: %d items became %d", c, len(d1), len(d2))
			continue
		}
		for i := range d1 {
			if d1[i] != d2[i] {
				t.Errorf("%s: item %d\n%s\nbecame\n%s", c, i, d1[i], d2[i])
				break
			}
		}
	}
}

// An export from a server on Pebble imported into one on PostgreSQL, and
// that one's export (over gRPC) into a new server on Pebble, gives every
// collection's schema and every document and message, byte for byte, in
// the same order.
func TestExportImportAcrossEngines(t *testing.T) {
	defer func(p int) { exportPage = p }(exportPage)
	exportPage = 37 // several pages per collection, and a last page that is full

	pebble := startOn(t, backendtest.OpenPebble(t))
	mustCall(t, "POST", pebble+"/v1/databases/shop/create", "")
	mustCall(t, "POST", pebble+collPath("shop", "items")+"/createOrUpdate", itemsSchema)
	mustCall(t, "POST", pebble+collPath("shop", "users")+"/createOrUpdate", `{"schema":{"title":"users","properties":{
		"id":{"type":"string","format":"uuid","autoGenerate":true},"email":{"type":"string"},"collection":{"type":"string"},"schema":{"type":"integer"},
		"balance":{"type":"number"},"big":{"type":"integer"},"raw":{"type":"string","format":"byte"}},"primary_key":["id"]}}`)
	mustCall(t, "POST", pebble+collPath("shop", "feed")+"/createOrUpdate", `{"schema":{"title":"feed","collection_type":"messages","properties":{"text":{"type":"string"},"n":{"type":"integer"}}}}`)
	var docs []string
	for i := range 222 {
		docs = append(docs, itemDoc(i, i))
	}
	mustCall(t, "POST", pebble+collPath("shop", "items")+"/documents/insert", `{"documents":[`+strings.Join(docs, ",")+`]}`)
	docs = docs[:0]
	for i := range 74 { // two full pages
		docs = append(docs, fmt.Sprintf(`{"email":"u%d@example.com","collection":"not a line of the export","schema":%d,"balance":%d.25,"big":%d,"raw":"AAEC/w=="}`, i, i, i, int64(1)<<53+int64(i)))
	}
	mustCall(t, "POST", pebble+collPath("shop", "users")+"/documents/insert", `{"documents":[`+strings.Join(docs, ",")+`]}`)
	for i := range 50 {
		mustCall(t, "POST", pebble+collPath("shop", "feed")+"/messages/publish", fmt.Sprintf(`{"messages":[{"text":"message \"%d\" \u00e9","n":%d}]}`, i, i))
	}
	colls := []string{"items", "users", "feed"}

	file := filepath.Join(t.TempDir(), "shop.jsonl")
	if err := execute([]string{"export", "--url", pebble, "--db", "shop", "-o", file}, io.Discard); err != nil {
		t.Fatalf("export from pebble: %v", err)
	}
	postgres := startOn(t, backendtest.OpenPostgres(t))
	var out bytes.Buffer
	if err := runImport([]string{"--url", postgres, file}, nil, &out); err != nil {
		t.Fatalf("import into postgres: %v", err)
	}
	if want := `{"collections":3,"db":"shop","documents":296,"messages":50}`; strings.TrimSpace(out.String()) != want {
		t.Errorf("import printed %q", out.String())
	}
	sameDatabase(t, pebble, postgres, "shop", colls...)

	// And back, through standard output and input, into a database of
	// another name, over gRPC.
	var exported bytes.Buffer
	if err := execute([]string{"export", "--url", overGRPC(postgres), "--db", "shop"}, &exported); err != nil {
		t.Fatalf("export from postgres: %v", err)
	}
	pebble2 := startOn(t, backendtest.OpenPebble(t))
	if err := runImport([]string{"--url", overGRPC(pebble2), "--db", "shop", "-"}, bytes.NewReader(exported.Bytes()), io.Discard); err != nil {
		t.Fatalf("import into pebble: %v", err)
	}
	sameDatabase(t, pebble, pebble2, "shop", colls...)

	// One collection alone.
	one := filepath.Join(t.TempDir(), "users.jsonl")
	if err := execute([]string{"export", "--url", pebble, "--db", "shop", "--collection", "users", "-o", one}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := runImport([]string{"--url", pebble2, "--db", "copy", one}, nil, io.Discard); err != nil {
		t.Fatal(err)
	}
	s1, d1 := collectionState(t, pebble, "shop", "users")
	s2, d2 := collectionState(t, pebble2, "copy", "users")
	if s1 != s2 || strings.Join(d1, "\n") != strings.Join(d2, "\n") {
		t.Errorf("users exported alone and imported into copy differ")
	}
	if _, items := collectionState(t, pebble2, "copy", "users"); len(items) != 74 {
		t.Errorf("copy.users holds %d documents, want 74", len(items))
	}
}

// An export cut short is imported as far as it goes and reported as cut;
// a file that is not an export is refused before anything is written.
func TestImportRefusals(t *testing.T) {
	src := startOn(t, backendtest.OpenPebble(t))
	mustCall(t, "POST", src+"/v1/databases/shop/create", "")
	mustCall(t, "POST", src+collPath("shop", "items")+"/createOrUpdate", itemsSchema)
	var docs []string
	for i := range 10 {
		docs = append(docs, itemDoc(i, i))
	}
	mustCall(t, "POST", src+collPath("shop", "items")+"/documents/insert", `{"documents":[`+strings.Join(docs, ",")+`]}`)
	var exported bytes.Buffer
	if err := execute([]string{"export", "--url", src, "--db", "shop"}, &exported); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(exported.String(), "\n")
	if len(lines) != 14 || !strings.HasPrefix(lines[0], `{"folio_export":1,"database":"shop"`) || !strings.HasPrefix(lines[12], `{"folio_export_end":{"collections":1,"items":10}}`) {
		t.Fatalf("the export:\n%s", exported.String())
	}
	dst := startOn(t, backendtest.OpenPebble(t))
	cut := strings.Join(lines[:7], "") // the header, the collection and 5 documents
	err := runImport([]string{"--url", dst, "-"}, strings.NewReader(cut), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("import of a cut export: %v, want it reported as cut", err)
	}
	if _, items := collectionState(t, dst, "shop", "items"); len(items) != 5 {
		t.Fatalf("the cut import wrote %d documents, want the 5 it held", len(items))
	}
	// Run again whole: the documents written before are written again.
	if err := runImport([]string{"--url", dst, "-"}, strings.NewReader(exported.String()), io.Discard); err != nil {
		t.Fatal(err)
	}
	sameDatabase(t, src, dst, "shop", "items")

	for name, in := range map[string]string{
		"documents":     docs[0] + "\n",
		"empty":         "",
		"other version": `{"folio_export":2,"database":"shop"}` + "\n",
	} {
		err := runImport([]string{"--url", dst, "--db", "other", "-"}, strings.NewReader(in), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "not a Folio export") {
			t.Errorf("%s: import: %v, want it refused as not an export", name, err)
		}
	}
	if code, _ := call(t, "POST", dst+"/v1/databases/other/describe", ""); code != 404 {
		t.Errorf("a refused import made database other (describe: %d)", code)
	}
	// An export to a file that exists is refused, the file kept.
	file := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(file, []byte("mine"), 0o600)
	if err := execute([]string{"export", "--url", src, "--db", "shop", "-o", file}, io.Discard); err == nil {
		t.Fatal("export over an existing file was not refused")
	}
	if b, _ := os.ReadFile(file); string(b) != "mine" {
		t.Fatalf("the refused export changed the file: %q", b)
	}
}

// runImport runs `folio import` with args as its entry point does, and
// returns its error rather than an exit code.
func runImport(args []string, stdin io.Reader, out io.Writer) error {
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	return executeWith(append([]string{"import"}, args...), stdin, out)
}
