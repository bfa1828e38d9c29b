package ops

import (
	"context"
	"strconv"
	"testing"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/tests/backendtest"
)

// BenchmarkCacheCalls measures a cache's set and get through the
// operations alone (no transport), on a volatile and on a durable cache of
// the embedded store, with values of 100 bytes on 1,000 keys: allocs/op is
// the figure to compare across changes (time on a shared machine is noise).
func BenchmarkCacheCalls(b *testing.B) {
	store := backendtest.OpenPebble(b)
	o := New(Config{Store: store, Catalog: catalog.New(), Docs: documents.New(), Sessions: session.New(store, session.Options{Origin: "bench"}),
		Observer: discardObserver{}})
	ctx, c := context.Background(), Caller{Transport: TransportGRPC}
	if err := o.CreateProject(ctx, c, DatabaseRequest{DB: "bench"}); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, 100)
	const keys = 1000
	for _, volatile := range []bool{true, false} {
		name := "durable"
		if volatile {
			name = "volatile"
		}
		if err := o.CreateCache(ctx, c, CacheRequest{Project: "bench", Name: name, Options: CacheOptions{Volatile: volatile}}); err != nil {
			b.Fatal(err)
		}
		key := make([]string, keys)
		for i := range key {
			key[i] = "key" + strconv.Itoa(i)
			if err := o.CacheSet(ctx, c, CacheKeyRequest{Project: "bench", Cache: name, Key: key[i], Value: value}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(name+"/Set", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if err := o.CacheSet(ctx, c, CacheKeyRequest{Project: "bench", Cache: name, Key: key[i%keys], Value: value}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/Get", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := o.CacheGet(ctx, c, CacheKeyRequest{Project: "bench", Cache: name, Key: key[i%keys]}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
