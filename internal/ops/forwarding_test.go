package ops

import (
	"context"
	"testing"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/cluster"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/session"
)

// When the registry cannot be read, a request of another node's
// transaction answers UNAVAILABLE with a retry delay: served here instead,
// it would answer FAILED_PRECONDITION ("held by node ..."), which a client
// does not retry (TestNodesSharingPostgres failed so under load).
func TestForwardToRegistryUnreadable(t *testing.T) {
	store, err := pebblekv.Open(pebblekv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	o := New(Config{Store: store, Sessions: session.New(store, session.Options{Origin: "here"}), Cluster: cluster.New(store, cluster.Options{}),
		Catalog: catalog.New(), Docs: documents.New(), Auth: auth.New(store, auth.Config{})})
	tx := TxRef{ID: "t1", Origin: "elsewhere"}
	if _, ok, err := o.ForwardTo(context.Background(), tx, false); ok || err != nil {
		t.Fatalf("a node not registered (gone): forward %v, %v; want served here", ok, err)
	}
	store.Close() // the registry cannot be read any more
	_, ok, err := o.ForwardTo(context.Background(), tx, false)
	e, isStatus := apierror.From(err)
	if ok || !isStatus || e.Code != apierror.Unavailable || e.RetryDelay == 0 {
		t.Fatalf("registry unreadable: forward %v, %v; want UNAVAILABLE with a retry delay", ok, err)
	}
	if _, ok, err := o.ForwardTo(context.Background(), TxRef{ID: "t2", Origin: "here"}, false); ok || err != nil {
		t.Fatalf("a transaction of this node: forward %v, %v", ok, err)
	}
}
