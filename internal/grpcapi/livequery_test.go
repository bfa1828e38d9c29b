package grpcapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// A filtered events stream over gRPC (Folio's filter field) with writers
// moving documents in and out of the filter concurrently: the changes it
// delivers, applied to a client's view by key, equal a reread with the
// same filter once the writers stop, and each concerns the view. A stream
// resumed from a delivered change's position sends the same changes after
// it.
func TestFilteredEvents(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withUsers(t, s)
		const filter = `{"name":"in"}`
		open := func(after string) api.Tigris_EventsClient {
			t.Helper()
			st, err := s.rpc.Events(ctx(t), &api.EventsRequest{Db: "db1", Collection: "users", Filter: []byte(filter),
				Options: &api.EventsRequestOptions{StartAfter: after}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Header(); err != nil { // the stream is open
				t.Fatal(err)
			}
			return st
		}
		events := open("")
		const writers, each, docs = 4, 30, 40
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for range each {
					id, name := rng.IntN(docs), []string{"in", "out"}[rng.IntN(2)]
					var err error
					switch rng.IntN(4) {
					case 0:
						_, err = s.rpc.Replace(context.Background(), &api.ReplaceRequest{Project: "db1", Collection: "users",
							Documents: [][]byte{fmt.Appendf(nil, `{"id":%d,"name":%q}`, id, name)}})
					case 1, 2:
						_, err = s.rpc.Update(context.Background(), &api.UpdateRequest{Project: "db1", Collection: "users",
							Filter: fmt.Appendf(nil, `{"id":%d}`, id), Fields: fmt.Appendf(nil, `{"$set":{"name":%q}}`, name)})
					case 3:
						_, err = s.rpc.Delete(context.Background(), &api.DeleteRequest{Project: "db1", Collection: "users",
							Filter: fmt.Appendf(nil, `{"id":%d}`, id)})
					}
					if err != nil && grpcstatus.Code(err) != codes.Aborted {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":999,"name":"in"}`)}}); err != nil {
			t.Fatal(err)
		}
		view := map[string]string{}
		var got []*api.StreamEvent
		for {
			r, err := events.Recv()
			if err != nil {
				t.Fatalf("after %d events: %v", len(got), err)
			}
			ev := r.Event
			if string(ev.Data) == `{"id":999,"name":"in"}` {
				break
			}
			got = append(got, ev)
			key := string(ev.Key)
			switch {
			case ev.Op == "delete" || ev.LeftFilter:
				if _, ok := view[key]; !ok {
					t.Errorf("%s (left_filter %v) of a document the view does not hold: %s", ev.Op, ev.LeftFilter, ev.Data)
				}
				if ev.LeftFilter && strings.Contains(string(ev.Data), `"in"`) {
					t.Errorf("left_filter on a matching document %s", ev.Data)
				}
				delete(view, key)
			case !strings.Contains(string(ev.Data), `"name":"in"`):
				t.Errorf("%s delivered as it is, but does not match: %s", ev.Op, ev.Data)
			default:
				view[key] = string(ev.Data)
			}
		}
		var mine []string
		for _, d := range view {
			mine = append(mine, d)
		}
		sort.Strings(mine)
		var want []string
		for _, d := range readAll(t, s, ctx(t), filter) {
			if d != `{"id":999,"name":"in"}` {
				want = append(want, d)
			}
		}
		sort.Strings(want)
		if strings.Join(mine, "\n") != strings.Join(want, "\n") {
			t.Errorf("the view built from the stream:\n%s\nreread:\n%s", strings.Join(mine, "\n"), strings.Join(want, "\n"))
		}
		left := 0
		for _, ev := range got {
			if ev.LeftFilter {
				left++
			}
		}
		if len(got) < 3 || left == 0 {
			t.Fatalf("%d events delivered, %d leaving the filter: the writers should have moved documents both ways", len(got), left)
		}
		// Resumed from a change in the middle: the same changes after it.
		mid := len(got) / 2
		again := open(got[mid].Position)
		for i, want := range got[mid+1:] {
			r, err := again.Recv()
			if err != nil {
				t.Fatalf("resumed event %d: %v", i, err)
			}
			if r.Event.Position != want.Position || r.Event.LeftFilter != want.LeftFilter || string(r.Event.Data) != string(want.Data) {
				t.Fatalf("resumed event %d: %v, want %v", i, r.Event, want)
			}
		}
	})
}

// A bad filter and an unknown field in an events or read request's options
// are refused with INVALID_ARGUMENT before anything is streamed, the filter
// with the parser's message, as HTTP has it.
func TestFilteredEventsRefusals(t *testing.T) {
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfig())
	withUsers(t, s)
	recvErr := func(st interface {
		Recv() (*api.EventsResponse, error)
	}, err error) error {
		if err != nil {
			return err
		}
		_, err = st.Recv()
		return err
	}
	err := recvErr(s.rpc.Events(ctx(t), &api.EventsRequest{Db: "db1", Collection: "users", Filter: []byte(`{"name":{"$bogus":1}}`)}))
	status, body, _ := httpDo(t, s.http1, "POST", s.base+"/v1/databases/db1/collections/users/events", `{"filter":{"name":{"$bogus":1}}}`)
	if grpcstatus.Code(err) != codes.InvalidArgument || status != 400 || !strings.Contains(body, grpcstatus.Convert(err).Message()) {
		t.Errorf("bad filter: %v; HTTP says %s", err, body)
	}
	unknown := func() []byte { return protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1) }
	eo := &api.EventsRequestOptions{}
	eo.ProtoReflect().SetUnknown(unknown())
	err = recvErr(s.rpc.Events(ctx(t), &api.EventsRequest{Db: "db1", Collection: "users", Options: eo}))
	if grpcstatus.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "unknown option: field number 99 of EventsRequestOptions") {
		t.Errorf("unknown events option: %v", err)
	}
	if _, err := s.rpc.CreateOrUpdateCollection(ctx(t), &api.CreateOrUpdateCollectionRequest{Project: "db1", Collection: "feed",
		Schema: []byte(`{"title":"feed","collection_type":"messages","properties":{"text":{"type":"string"}}}`)}); err != nil {
		t.Fatal(err)
	}
	so := &api.SubscribeRequestOptions{}
	so.ProtoReflect().SetUnknown(unknown())
	sub, err := s.rpc.Subscribe(ctx(t), &api.SubscribeRequest{Db: "db1", Collection: "feed", Options: so})
	if err == nil {
		_, err = sub.Recv()
	}
	if grpcstatus.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "field number 99 of SubscribeRequestOptions") {
		t.Errorf("unknown subscribe option: %v", err)
	}
	ro := &api.ReadRequestOptions{Limit: 1}
	ro.ProtoReflect().SetUnknown(unknown())
	rd, err := s.rpc.Read(ctx(t), &api.ReadRequest{Project: "db1", Collection: "users", Filter: []byte(`{}`), Options: ro})
	if err == nil {
		_, err = rd.Recv()
	}
	if grpcstatus.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "field number 99 of ReadRequestOptions; this request's options are limit, skip, offset, collation") {
		t.Errorf("unknown read option: %v", err)
	}
}
