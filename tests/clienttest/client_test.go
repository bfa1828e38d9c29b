package clienttest

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/tigrisdata/tigris-client-go/config"
	"github.com/tigrisdata/tigris-client-go/driver"
	"github.com/tigrisdata/tigris-client-go/fields"
	"github.com/tigrisdata/tigris-client-go/filter"
	"github.com/tigrisdata/tigris-client-go/search"
	"github.com/tigrisdata/tigris-client-go/tigris"

	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
)

// The clients drive a real `folio serve`: their generated protobuf
// package and the server's own (internal/wire/tigrisv1) register the same
// names, and cannot be linked into one binary.
func TestMain(m *testing.M) { os.Exit(servetest.Main(m)) }

// User is an application's model: the client derives the collection
// ("users") and its schema from it, with a key the server generates.
type User struct {
	ID   uuid.UUID `json:"id" tigris:"primaryKey,autoGenerate"`
	Name string    `json:"name"`
	Age  int64     `json:"age"`
}

// protocolMu guards the client's protocol, a package variable it reads
// when it connects: the backends' subtests run in parallel.
var protocolMu sync.Mutex

// connect returns a client of the node at addr over protocol (driver.GRPC,
// the client's default, or driver.HTTP), closed at the end of the test.
func connect(t *testing.T, addr, protocol string) *tigris.Client {
	t.Helper()
	c, err := connectWith(addr, protocol, "http", config.Driver{})
	if err != nil {
		t.Fatalf("connect over %s: %v", protocol, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connectWith connects a client with the driver's settings cfg (its URL
// made from addr, and the scheme for HTTP).
func connectWith(addr, protocol, scheme string, cfg config.Driver) (*tigris.Client, error) {
	var c *tigris.Client
	err := withProtocol(protocol, func() error {
		cfg.URL = addr // gRPC: host:port
		if protocol == driver.HTTP {
			cfg.URL = scheme + "://" + addr // without a scheme the client would use https
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var err error
		c, err = tigris.NewClient(ctx, &config.Database{Driver: cfg})
		return err
	})
	return c, err
}

// withProtocol runs fn with the client's protocol set: the client reads it
// from a package variable when it connects.
func withProtocol(protocol string, fn func() error) error {
	protocolMu.Lock()
	defer protocolMu.Unlock()
	if driver.DefaultProtocol != driver.GRPC {
		return errors.New("the client's default protocol is " + driver.DefaultProtocol + ", not gRPC")
	}
	if protocol == driver.HTTP {
		driver.DefaultProtocol = driver.HTTP
		defer func() { driver.DefaultProtocol = driver.GRPC }()
	}
	return fn()
}

func TestOfficialGoClient(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		srv := servetest.Start(t, servetest.Options{Backend: b})
		// gRPC first: it is what the client speaks unless told otherwise.
		for _, protocol := range []string{driver.GRPC, driver.HTTP} {
			t.Run(protocol, func(t *testing.T) {
				clientFlow(t, connect(t, srv.Addr, protocol), protocol, "shop_"+protocol)
			})
		}
	})
}

func clientFlow(t *testing.T, c *tigris.Client, protocol, dbName string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// The database and the collection from the struct (the client creates
	// the collection inside a transaction of its own).
	db, err := c.OpenDatabase(ctx, dbName, &User{})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	users := tigris.GetCollection[User](db)

	// Insert with generated keys.
	people := []*User{{Name: "Ann", Age: 30}, {Name: "Bob", Age: 25}, {Name: "Cid", Age: 41}}
	res, err := users.Insert(ctx, people...)
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	switch protocol {
	case driver.GRPC:
		// The server's keys reach the application: the client unmarshals
		// each into the document it inserted.
		if len(res.Keys) != len(people) {
			t.Fatalf("insert returned %d keys, want %d", len(res.Keys), len(people))
		}
		for i, p := range people {
			if p.ID == uuid.Nil {
				t.Errorf("document %d has no generated id after insert (key %s)", i, res.Keys[i])
			}
		}
	case driver.HTTP:
		// The client's HTTP decoder drops the response's keys (a client
		// limitation, docs/api.md): the ids stay zero in the application.
		if len(res.Keys) != 0 || people[0].ID != uuid.Nil {
			t.Errorf("over HTTP the client now returns keys (%q, id %s): update docs/api.md", res.Keys, people[0].ID)
		}
		// The application finds them by reading.
		for _, p := range people {
			got, err := users.ReadOne(ctx, filter.Eq("name", p.Name))
			if err != nil {
				t.Fatalf("read %s by name: %v", p.Name, err)
			}
			p.ID = got.ID
		}
	}

	// Read by key: every generated id is distinct and reads its document.
	seen := map[uuid.UUID]bool{}
	for _, p := range people {
		if p.ID == uuid.Nil || seen[p.ID] {
			t.Fatalf("ids not generated or not distinct: %v", people)
		}
		seen[p.ID] = true
		got, err := users.ReadOne(ctx, filter.Eq("id", p.ID))
		if err != nil {
			t.Fatalf("read %s by id: %v", p.Name, err)
		}
		if *got != *p {
			t.Errorf("read by id %+v, want %+v", got, p)
		}
	}

	// Filters.
	names := func(f filter.Filter) []string {
		t.Helper()
		it, err := users.Read(ctx, f)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		defer it.Close()
		var out []string
		var u User
		for it.Next(&u) {
			out = append(out, u.Name)
		}
		if err := it.Err(); err != nil {
			t.Fatalf("read: %v", err)
		}
		return sorted(out)
	}
	wantNames(t, "age > 26", names(filter.Gt("age", 26)), "Ann", "Cid")
	wantNames(t, "26 <= age <= 30", names(filter.And(filter.Gte("age", 26), filter.Lte("age", 30))), "Ann")
	wantNames(t, "Bob or Cid", names(filter.Or(filter.Eq("name", "Bob"), filter.Eq("name", "Cid"))), "Bob", "Cid")
	wantNames(t, "all", names(filter.All), "Ann", "Bob", "Cid")

	// Update and delete.
	if _, err := users.Update(ctx, filter.Eq("name", "Bob"), fields.Set("age", 26)); err != nil {
		t.Fatalf("update: %v", err)
	}
	if got, err := users.ReadOne(ctx, filter.Eq("id", people[1].ID)); err != nil || got.Age != 26 {
		t.Errorf("after the update: %+v %v", got, err)
	}
	if _, err := users.Delete(ctx, filter.Eq("name", "Cid")); err != nil {
		t.Fatalf("delete: %v", err)
	}
	wantNames(t, "after the delete", names(filter.All), "Ann", "Bob")

	// A transaction that commits: inside it, its own write is seen.
	err = db.Tx(ctx, func(ctx context.Context) error {
		if _, err := users.Insert(ctx, &User{Name: "Dan", Age: 50}); err != nil {
			return err
		}
		if _, err := users.ReadOne(ctx, filter.Eq("name", "Dan")); err != nil {
			return errors.New("the transaction does not see its own insert: " + err.Error())
		}
		_, err := users.Update(ctx, filter.Eq("name", "Ann"), fields.Set("age", 31))
		return err
	})
	if err != nil {
		t.Fatalf("transaction: %v", err)
	}
	wantNames(t, "after commit", names(filter.All), "Ann", "Bob", "Dan")
	if got, err := users.ReadOne(ctx, filter.Eq("name", "Ann")); err != nil || got.Age != 31 {
		t.Errorf("the transaction's update: %+v %v", got, err)
	}

	// A transaction that fails rolls back.
	errAbandon := errors.New("abandon")
	err = db.Tx(ctx, func(ctx context.Context) error {
		if _, err := users.Insert(ctx, &User{Name: "Eve", Age: 20}); err != nil {
			return err
		}
		if _, err := users.Delete(ctx, filter.Eq("name", "Bob")); err != nil {
			return err
		}
		return errAbandon
	})
	if !errors.Is(err, errAbandon) {
		t.Fatalf("the abandoned transaction returned %v", err)
	}
	wantNames(t, "after rollback", names(filter.All), "Ann", "Bob", "Dan")

	// Errors come back with their codes.
	_, err = users.Insert(ctx, &User{ID: people[0].ID, Name: "Ann again"})
	var te *driver.Error
	if !errors.As(err, &te) || te.Code.String() != "ALREADY_EXISTS" || te.Message != `duplicate key value, violates key constraint: key {"id":"`+people[0].ID.String()+`"} exists already` {
		t.Errorf("a duplicate key: %v", err)
	}

	switch protocol {
	case driver.GRPC:
		searchFlow(ctx, t, users)
	case driver.HTTP:
		// The client's HTTP decoder reads a hit's data as base64 bytes,
		// where the server sends the document as a JSON object (as the
		// original did too): search over its HTTP protocol cannot work
		// (a client limitation, docs/api.md).
		it, err := users.Search(ctx, search.NewRequestBuilder().WithQuery("dan").Build())
		if err == nil {
			var page search.Result[User]
			for it.Next(&page) {
			}
			err = it.Err()
			it.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "cannot unmarshal object") {
			t.Errorf("search over the client's HTTP protocol: %v; if the client now decodes hits, search over HTTP works: update docs/api.md and this test", err)
		}
	}
	events(ctx, t, users)
}

// searchFlow searches the collection's documents as the application sees
// them then (Ann, Bob and Dan): a term, a filter and a facet, through the
// client's own search request and result types.
func searchFlow(ctx context.Context, t *testing.T, users *tigris.Collection[User]) {
	t.Helper()
	run := func(what string, req *search.Request) []search.Result[User] {
		t.Helper()
		it, err := users.Search(ctx, req)
		if err != nil {
			t.Fatalf("search %s: %v", what, err)
		}
		defer it.Close()
		var pages []search.Result[User]
		var page search.Result[User]
		for it.Next(&page) {
			pages = append(pages, page)
			page = search.Result[User]{}
		}
		if err := it.Err(); err != nil {
			t.Fatalf("search %s: %v", what, err)
		}
		return pages
	}
	hitNames := func(pages []search.Result[User]) []string {
		var out []string
		for _, p := range pages {
			for _, h := range p.Hits {
				out = append(out, h.Document.Name)
			}
		}
		return out
	}
	// A search sees the writes acknowledged before it.
	if got := hitNames(run("by name", search.NewRequestBuilder().WithQuery("dan").Build())); len(got) != 1 || got[0] != "Dan" {
		t.Errorf("search for dan: %v, want [Dan]", got)
	}
	pages := run("all, filtered, with a facet", search.NewRequestBuilder().WithQuery("").
		WithFilter(filter.Gt("age", 26)).WithFacetFields("name").Build())
	wantNames(t, "search filtered by age", sorted(hitNames(pages)), "Ann", "Dan") // no query: no rank order
	if len(pages) == 0 || pages[0].Meta.Found != 2 {
		t.Fatalf("search filtered by age: %+v, want 2 found", pages)
	}
	counts := map[string]int64{}
	for _, c := range pages[0].Facets["name"].Counts {
		counts[c.Value] = c.Count
	}
	if len(counts) != 2 || counts["Ann"] != 1 || counts["Dan"] != 1 {
		t.Errorf("facet of names: %v, want Ann and Dan once each", counts)
	}
}

// events checks the change events of an insert, an update and a delete.
// The client returns from opening the stream before the server has
// subscribed, so the test first writes probes until one comes back: from
// then on, every change reaches the stream.
func events(ctx context.Context, t *testing.T, users *tigris.Collection[User]) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	it, err := users.Events(ctx)
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	got := make(chan tigris.Event[User], 100)
	go func() {
		defer close(got)
		var ev tigris.Event[User]
		for it.Next(&ev) {
			select {
			case got <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	// The client's iterator is for one goroutine: the stream ends (the
	// context), the reader goroutine returns, and only then is it closed.
	defer func() {
		cancel()
		for range got {
		}
		it.Close()
	}()
	probe := func() {
		if _, err := users.Insert(ctx, &User{Name: "probe"}); err != nil {
			t.Errorf("probe: %v", err)
		}
	}
	probe()
	for live := false; !live; {
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatalf("the events stream ended: %v", it.Err())
			}
			live = ev.Data.Name == "probe"
		case <-time.After(200 * time.Millisecond):
			probe()
		}
	}
	fay := &User{Name: "Fay", Age: 60}
	if _, err := users.Insert(ctx, fay); err != nil {
		t.Fatal(err)
	}
	if _, err := users.Update(ctx, filter.Eq("name", "Fay"), fields.Set("age", 61)); err != nil {
		t.Fatal(err)
	}
	if _, err := users.Delete(ctx, filter.Eq("name", "Fay")); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		op  string
		age int64
	}{{"insert", 60}, {"update", 61}, {"delete", 0}}
	for i := 0; i < len(want); {
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatalf("the events stream ended: %v", it.Err())
			}
			if ev.Data.Name == "probe" {
				continue // a probe sent after the stream went live
			}
			w := want[i]
			if ev.Op != w.op || ev.Data.Age != w.age || (w.op != "delete" && ev.Data.Name != "Fay") || len(ev.TxId) == 0 || len(ev.Key) == 0 {
				t.Errorf("event %d: %s %+v, want %s of Fay aged %d", i, ev.Op, ev.Data, w.op, w.age)
			}
			i++
		case <-time.After(10 * time.Second):
			t.Fatalf("no event %d (%s) within 10s", i, want[i].op)
		}
	}
}

func wantNames(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %q, want %q", what, got, want)
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: %q, want %q", what, got, want)
			return
		}
	}
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}
