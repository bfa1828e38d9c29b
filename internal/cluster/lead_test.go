package cluster

import (
	"context"
	"testing"

	"github.com/foliodb/folio/tests/backendtest"
)

// Of the live nodes the one with the least id leads; a node that has not
// joined or has left leads nothing, and when the leader leaves the next
// one leads.
func TestLeads(t *testing.T) {
	ctx := context.Background()
	store := backendtest.OpenPebble(t)
	a, b := New(store, Options{Lease: testLease}), New(store, Options{Lease: testLease})
	lead := func(r *Registry) bool {
		t.Helper()
		ok, err := r.Leads(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if lead(a) {
		t.Fatal("a node that has not joined leads")
	}
	if err := b.Join(ctx, "web2", "10.0.0.2:8081", false); err != nil {
		t.Fatal(err)
	}
	if !lead(b) {
		t.Error("the only node does not lead")
	}
	if err := a.Join(ctx, "web1", "10.0.0.1:8081", false); err != nil {
		t.Fatal(err)
	}
	if !lead(a) || lead(b) {
		t.Errorf("web1 leads %v, web2 %v; want web1 alone", lead(a), lead(b))
	}
	if err := a.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	if lead(a) || !lead(b) {
		t.Errorf("after web1 left: web1 leads %v, web2 %v; want web2 alone", lead(a), lead(b))
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}
