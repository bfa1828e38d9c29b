package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// BenchmarkImport imports a file of 100,000 JSON lines (19.3 MB, 9
// fields with a nested object and an array) through the CLI's entry point into a node of each backend, with
// the schema inferred and the default batches, and reports documents per
// second (docs/benchmarks.md "folio import"):
//
//	go test -run '^$' -bench BenchmarkImport -benchtime 1x ./cmd/folio/
func BenchmarkImport(b *testing.B) {
	const lines = 100_000
	file := filepath.Join(b.TempDir(), "docs.jsonl")
	size := writeImportFile(b, file, lines)
	runs := 0 // each import into a new collection, across the runs the benchmark makes
	backendtest.EachB(b, func(b *testing.B, be backendtest.Backend) {
		n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Store = be.Open(b)
			nc.Addr = "127.0.0.1:0"
			nc.ShutdownTimeout = 5 * time.Second
		}))
		if err != nil {
			b.Fatal(err)
		}
		defer n.Close()
		url := "http://" + n.Addr().String()
		b.SetBytes(size)
		b.ResetTimer()
		for range b.N {
			runs++
			var stdout, stderr syncBuffer
			args := []string{"import", "--db", "bench", "--collection", fmt.Sprintf("docs%d", runs), "--infer-schema", file}
			if code := runCLIWith(args, url, "", false, nil, &stdout, &stderr); code != exitOK {
				b.Fatalf("exit %d: %s", code, stderr.String())
			}
			if !strings.Contains(stdout.String(), fmt.Sprintf(`"imported":%d`, lines)) {
				b.Fatalf("the import printed %s", stdout.String())
			}
		}
		b.StopTimer() // the node's shutdown is no part of an import
		b.ReportMetric(float64(lines*b.N)/b.Elapsed().Seconds(), "docs/s")
	})
}

// writeImportFile writes n JSON lines of documents like a user table's and
// returns the file's size.
func writeImportFile(b *testing.B, file string, n int) int64 {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	cities := []string{"Paris", "Oslo", "Lyon", "Rome", "Bergen"}
	for i := range n {
		fmt.Fprintf(w, `{"id":%d,"name":"user %d","email":"user%d@example.com","age":%d,"score":%d.5,"active":%t,"joined":"2025-%02d-%02dT10:00:00Z","tags":["t%d","t%d"],"address":{"city":%q,"zip":"%05d"}}`+"\n",
			i, i, i, 18+i%60, i%100, i%3 == 0, 1+i%12, 1+i%28, i%7, i%11, cities[i%len(cities)], i%100000)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	st, err := f.Stat()
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	return st.Size()
}
