package finalclient

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tigrisdata/tigris-client-go/code"
	"github.com/tigrisdata/tigris-client-go/driver"
)

// TestTTLFlow is Folio's expiring documents (issue 40) through the final
// client as it is: a collection created from a raw schema with a ttl (the
// driver sends the schema as it is given), documents that expire seconds
// after they are written on the server's real clock, and reads, counts and
// describe around their time.
func TestTTLFlow(t *testing.T) {
	ctx, e, drv := projectFlow(t)
	db := drv.UseDatabase(e.project)
	const schema = `{"title":"sessions","properties":{"id":{"type":"string"},"expires_at":{"type":"string","format":"date-time"}},` +
		`"primary_key":["id"],"ttl":{"field":"expires_at"}}`
	if err := db.CreateOrUpdateCollection(ctx, "sessions", driver.Schema(schema)); err != nil {
		t.Fatalf("CreateOrUpdateCollection with a ttl: %v", err)
	}
	d, err := db.DescribeCollection(ctx, "sessions")
	if err != nil {
		t.Fatalf("DescribeCollection: %v", err)
	}
	var described struct {
		TTL struct{ Field string } `json:"ttl"`
	}
	if err := json.Unmarshal(d.Schema, &described); err != nil || described.TTL.Field != "expires_at" {
		t.Errorf("described schema %s: no ttl on expires_at (%v)", d.Schema, err)
	}
	// A refused ttl is the client's error, as any bad schema.
	bad := `{"title":"sessions","properties":{"id":{"type":"string"},"n":{"type":"integer"}},"primary_key":["id"],"ttl":{"field":"n"}}`
	wantCode(t, "a ttl on an integer field", db.CreateOrUpdateCollection(ctx, "sessions", driver.Schema(bad)), code.InvalidArgument)

	soon := time.Now().UTC().Add(2 * time.Second)
	later := time.Now().UTC().Add(time.Hour)
	if _, err := db.Insert(ctx, "sessions", []driver.Document{
		driver.Document(fmt.Sprintf(`{"id":"soon","expires_at":%q}`, soon.Format(time.RFC3339Nano))),
		driver.Document(fmt.Sprintf(`{"id":"later","expires_at":%q}`, later.Format(time.RFC3339Nano))),
		driver.Document(`{"id":"never"}`),
	}); err != nil {
		t.Fatalf("Insert: %v", err)
	}
	read := func(filter string) []string {
		t.Helper()
		it, err := db.Read(ctx, "sessions", driver.Filter(filter), nil)
		if err != nil {
			t.Fatalf("Read %s: %v", filter, err)
		}
		defer it.Close()
		var ids []string
		var doc driver.Document
		for it.Next(&doc) {
			var s struct{ ID string }
			if err := json.Unmarshal(doc, &s); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		if err := it.Err(); err != nil {
			t.Fatalf("Read %s: %v", filter, err)
		}
		slices.Sort(ids)
		return ids
	}
	if got := read(`{}`); !slices.Equal(got, []string{"later", "never", "soon"}) {
		t.Errorf("before it expires: %q", got)
	}
	// From its time on, no call returns it: wait for that on the server's
	// clock, a deadline away.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if got := read(`{}`); slices.Equal(got, []string{"later", "never"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the document that expired at %s is still read: %q", soon, read(`{}`))
		}
	}
	if time.Now().Before(soon) {
		t.Errorf("the document disappeared before its time %s", soon)
	}
	if got := read(`{"id":"soon"}`); len(got) != 0 {
		t.Errorf("read by key after its time: %q", got)
	}
	if n, err := db.Count(ctx, "sessions", driver.Filter(`{}`)); err != nil || n != 2 {
		t.Errorf("Count after its time: %d (%v), want 2", n, err)
	}
	// Its key is free.
	if _, err := db.Insert(ctx, "sessions", []driver.Document{driver.Document(`{"id":"soon"}`)}); err != nil {
		t.Errorf("Insert onto the expired document's key: %v", err)
	}
	if got := read(`{}`); !slices.Equal(got, []string{"later", "never", "soon"}) {
		t.Errorf("after the new insert: %q", got)
	}
}
