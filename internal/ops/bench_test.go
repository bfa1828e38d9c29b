package ops

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/tests/backendtest"
)

// BenchmarkOps measures the operations alone, without a transport, on the
// embedded store: what a call's opening and closing (calls.go) cost beside
// its work shows in allocs/op, which a transport's benchmark buries under
// its own. The observer is set, as on a node, so that the closing's whole
// path runs.
func BenchmarkOps(b *testing.B) {
	store := backendtest.OpenPebble(b)
	o := New(Config{Store: store, Catalog: catalog.New(), Docs: documents.New(), Sessions: session.New(store, session.Options{Origin: "bench"}),
		Observer: discardObserver{}})
	ctx, c := context.Background(), Caller{Transport: TransportHTTP}
	if err := o.CreateDatabase(ctx, c, DatabaseRequest{DB: "bench"}); err != nil {
		b.Fatal(err)
	}
	schema := []byte(`{"title":"users","primary_key":["id"],"properties":{"id":{"type":"integer"},"name":{"type":"string"}}}`)
	if _, err := o.CreateOrUpdateCollection(ctx, c, CreateCollectionRequest{DB: "bench", Collection: "users", Schema: schema}); err != nil {
		b.Fatal(err)
	}
	next := 0
	insert := func() error {
		next++
		doc := []byte(`{"id":` + strconv.Itoa(next) + `,"name":"user ` + strconv.Itoa(next) + `"}`)
		_, err := o.Insert(ctx, c, WriteDocumentsRequest{DB: "bench", Collection: "users", Documents: [][]byte{doc}})
		return err
	}
	for range 100 {
		if err := insert(); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("Insert", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := insert(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadOne", func(b *testing.B) {
		req := ReadRequest{DB: "bench", Collection: "users", Filter: []byte(`{"id":42}`)}
		emit := func(Item) error { return nil }
		b.ReportAllocs()
		for b.Loop() {
			if err := o.Read(ctx, c, req, emit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Info", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := o.Info(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A call refused at its opening: the cost of the opening and closing
	// alone (the role check, the observer).
	b.Run("Refused", func(b *testing.B) {
		refusing := New(Config{Store: store, Catalog: catalog.New(), Docs: documents.New(), Observer: discardObserver{},
			Options: Options{RequireAuth: true}})
		reader := Caller{App: "r", Role: "reader", Transport: TransportHTTP}
		req := WriteDocumentsRequest{DB: "bench", Collection: "users"}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := refusing.Insert(ctx, reader, req); apierror.CodeOf(err) != apierror.PermissionDenied {
				b.Fatal(err)
			}
		}
	})
}

type discardObserver struct{}

func (discardObserver) ObserveCall(string, string, apierror.Code, time.Duration) {}
