package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/client"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

type Note struct {
	ID   string `json:"id" tigris:"primaryKey"`
	Text string `json:"text"`
}

type Post struct {
	Text string `json:"text"`
}

// A stream resumes across a restart of the server: the changes committed
// while it was disconnected reach it, once each, in order. The stream is
// open on a node; the node stops; another node on the same data (at
// another address) commits b1..b3 and stops; a third starts at the first
// address, where the stream reconnects and must get b1..b3 and then c1.
func TestStreamsResumeAfterRestart(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		eachTransport(t, func(t *testing.T, scheme string) { streamsResumeAfterRestart(t, b, scheme) })
	})
}

func streamsResumeAfterRestart(t *testing.T, b backendtest.Backend, scheme string) {
	{
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		data := b.Durable(t)
		n := startNode(t, data.Open(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Addr = "127.0.0.1:0"
		}))
		addr := n.Addr().String()
		c := open(t, scheme+"://"+addr, client.Options{})
		db, err := c.CreateDatabase(ctx, "shop")
		must(t, err)
		must(t, db.CreateCollection(ctx, "notes", []byte(`{"properties":{"id":{"type":"string"},"text":{"type":"string"}},"primary_key":["id"]}`)))
		must(t, db.CreateCollection(ctx, "feed", []byte(`{"collection_type":"messages","properties":{"text":{"type":"string"}}}`)))

		events := make(chan string, 100)
		go func() {
			for ev, err := range client.Coll[Note](db, "notes").Events(ctx) {
				if err != nil {
					events <- "error: " + err.Error()
					return
				}
				events <- ev.Op + " " + ev.Data.ID
			}
		}()
		messages := make(chan string, 100)
		go func() {
			for m, err := range client.Coll[Post](db, "feed").Subscribe(ctx, client.All()) {
				if err != nil {
					messages <- "error: " + err.Error()
					return
				}
				messages <- m.Data.Text
			}
		}()
		write := func(db *client.Database, name string) {
			t.Helper()
			_, err := client.Coll[Note](db, "notes").Insert(ctx, &Note{ID: name, Text: name})
			must(t, err)
			_, err = client.Coll[Post](db, "feed").Publish(ctx, Post{Text: name})
			must(t, err)
		}
		// Probes until both streams are in place (they start at "now").
		for i := 0; len(events) == 0 || len(messages) == 0; i++ {
			if i == 100 {
				t.Fatal("the streams never started")
			}
			write(db, fmt.Sprintf("probe%02d", i))
			time.Sleep(50 * time.Millisecond)
		}
		for _, s := range []string{"a1", "a2", "a3"} {
			write(db, s)
		}
		wantNext(t, events, "insert a1", "insert a2", "insert a3")
		wantNext(t, messages, "a1", "a2", "a3")

		must(t, n.Close())
		n2 := startNode(t, data.Open(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Addr = "127.0.0.1:0"
		}))
		db2 := open(t, scheme+"://"+n2.Addr().String(), client.Options{}).Database("shop")
		for _, s := range []string{"b1", "b2", "b3"} {
			write(db2, s)
		}
		must(t, n2.Close())
		n3 := restartOn(t, data, addr)
		defer n3.Close()
		write(db, "c1")
		wantNext(t, events, "insert b1", "insert b2", "insert b3", "insert c1")
		wantNext(t, messages, "b1", "b2", "b3", "c1")
		cancel()
		if got := <-events; got != "error: context canceled" {
			t.Fatalf("after cancel, the events stream gave %q", got)
		}
	}
}

// wantNext reads from ch, past the probes, until it has got len(want)
// items, which must be want.
func wantNext(t *testing.T, ch chan string, want ...string) {
	t.Helper()
	var got []string
	timeout := time.After(30 * time.Second)
	for len(got) < len(want) {
		select {
		case s := <-ch:
			if len(got) == 0 && strings.Contains(s, "probe") {
				continue
			}
			got = append(got, s)
		case <-timeout:
			t.Fatalf("got %q, then nothing for 30s; want %q", got, want)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// A stream whose request is refused ends with the error at once: there
// is nothing to resume.
func TestStreamsEndOnRefusal(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client.Client) {
		// Bounded: a stream that is not refused would never end the loops.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := c.CreateDatabase(ctx, "shop")
		must(t, err)
		for _, err := range client.Coll[Note](db, "nobody").Events(ctx) {
			wantCode(t, err, client.NotFound)
		}
		must(t, db.CreateCollection(ctx, "notes", []byte(`{"properties":{"id":{"type":"string"}}}`)))
		for _, err := range client.Coll[Note](db, "notes").Events(ctx, client.StartAfter("not a position")) {
			wantCode(t, err, client.InvalidArgument)
		}
		for _, err := range client.Coll[Post](db, "notes").Subscribe(ctx, client.All()) {
			wantCode(t, err, client.InvalidArgument)
		}
		_, err = client.Coll[Post](db, "notes").Publish(ctx, Post{Text: "x"})
		wantCode(t, err, client.InvalidArgument)
	})
}

// A stream whose server does not come back gives up after
// Options.StreamReconnect with the last error.
func TestStreamsGiveUp(t *testing.T) {
	eachTransport(t, streamsGiveUp)
}

func streamsGiveUp(t *testing.T, scheme string) {
	n := startNode(t, backendtest.OpenPebble(t), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Addr = "127.0.0.1:0"
	}))
	c := open(t, scheme+"://"+n.Addr().String(), client.Options{StreamReconnect: 500 * time.Millisecond})
	ctx := context.Background()
	db, err := c.CreateDatabase(ctx, "shop")
	must(t, err)
	must(t, db.CreateCollection(ctx, "notes", []byte(`{"properties":{"id":{"type":"string"}}}`)))
	done := make(chan error, 1)
	go func() {
		for _, err := range client.Coll[Note](db, "notes").Events(ctx) {
			done <- err
			return
		}
	}()
	time.Sleep(300 * time.Millisecond) // the stream opens
	start := time.Now()
	must(t, n.Close())
	select {
	case err := <-done:
		if err == nil || client.IsCode(err, client.NotFound) {
			t.Fatalf("the stream ended with %v", err)
		}
		if d := time.Since(start); d < 400*time.Millisecond {
			t.Fatalf("gave up after %v, before StreamReconnect", d)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the stream never gave up")
	}
}

// restartOn starts a node on the store data opens, listening on addr again.
// Another test binary running beside this one may have been handed addr's
// port while it was free: the start is tried again for a few seconds.
func restartOn(t *testing.T, data backendtest.Durable, addr string) *node.Node {
	t.Helper()
	for try := 0; ; try++ {
		store := data.Open()
		n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
			nc.Store = store
			nc.Addr = addr
			nc.ShutdownTimeout = 5 * time.Second
		}))
		if err == nil {
			return n
		}
		store.Close()
		if !errors.Is(err, syscall.EADDRINUSE) || try == 50 {
			t.Fatalf("start a node on %s again: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Matching narrows an events stream to the changes of the documents its
// filter matches, before or after the change: one that moves a document
// out arrives with LeftFilter, one that never concerned the filter does
// not arrive; a bad filter ends the stream with the server's refusal.
func TestEventsMatching(t *testing.T) {
	eachBackend(t, func(t *testing.T, c *client.Client) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		db, err := c.CreateDatabase(ctx, "shop")
		must(t, err)
		must(t, db.CreateCollection(ctx, "notes", []byte(`{"properties":{"id":{"type":"string"},"text":{"type":"string"}},"primary_key":["id"]}`)))
		notes := client.Coll[Note](db, "notes")
		for _, err := range notes.Events(ctx, client.Matching(client.RawFilter([]byte(`{"text":{"$bogus":1}}`)))) {
			wantCode(t, err, client.InvalidArgument)
		}
		events := make(chan string, 100)
		go func() {
			for ev, err := range notes.Events(ctx, client.Matching(client.Eq("text", "HOT")), client.CaseInsensitive()) {
				if err != nil {
					events <- "error: " + err.Error()
					return
				}
				s := ev.Op + " " + ev.Data.ID
				if ev.LeftFilter {
					s += " left"
				}
				events <- s
			}
		}()
		// Probes until the stream is in place (it starts at "now").
		for i := 0; len(events) == 0; i++ {
			if i == 100 {
				t.Fatal("the stream never started")
			}
			_, err := notes.Insert(ctx, &Note{ID: fmt.Sprintf("probe%02d", i), Text: "hot"})
			must(t, err)
			time.Sleep(50 * time.Millisecond)
		}
		_, err = notes.Insert(ctx, &Note{ID: "a", Text: "hot"}, &Note{ID: "b", Text: "cold"})
		must(t, err)
		_, err = notes.Update(ctx, client.Eq("id", "a"), client.Set("text", "cold"))
		must(t, err)
		_, err = notes.Update(ctx, client.Eq("id", "b"), client.Set("text", "tepid"))
		must(t, err)
		_, err = notes.Update(ctx, client.Eq("id", "b"), client.Set("text", "hot"))
		must(t, err)
		wantNext(t, events, "insert a", "update a left", "update b")
	})
}
