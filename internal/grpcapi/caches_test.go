package grpcapi_test

import (
	"errors"
	"io"
	"sort"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// The Cache service over gRPC: every method, on a durable cache and a
// volatile one, with the original's statuses and messages, and each
// refusal with its code.
func TestCacheService(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		c := ctx(t)
		cc := api.NewCacheClient(s.conn)
		if _, err := s.rpc.CreateProject(c, &api.CreateProjectRequest{Project: "shop"}); err != nil {
			t.Fatal(err)
		}
		for _, volatile := range []bool{false, true} {
			name := "durable"
			if volatile {
				name = "volatile"
			}
			t.Run(name, func(t *testing.T) {
				created, err := cc.CreateCache(c, &api.CreateCacheRequest{Project: "shop", Name: name, Options: &api.CreateCacheOptions{Volatile: volatile}})
				if err != nil || created.Status != "created" || created.Message != "Cache is created successfully" {
					t.Fatalf("create: %v %v", created, err)
				}
				_, err = cc.CreateCache(c, &api.CreateCacheRequest{Project: "shop", Name: name})
				if code, msg, _ := rpcError(t, err); code != codes.AlreadyExists || msg != "cache already exist '"+name+"'" {
					t.Errorf("create again: %v %q", code, msg)
				}
				set, err := cc.Set(c, &api.SetRequest{Project: "shop", Name: name, Key: "k1", Value: []byte("v1")})
				if err != nil || set.Status != "set" || set.Message != "Key is set successfully" {
					t.Fatalf("set: %v %v", set, err)
				}
				got, err := cc.Get(c, &api.GetRequest{Project: "shop", Name: name, Key: "k1"})
				if err != nil || string(got.Value) != "v1" || got.ExpiresInMs != nil {
					t.Fatalf("get: %v %v", got, err)
				}
				_, err = cc.Set(c, &api.SetRequest{Project: "shop", Name: name, Key: "k1", Value: []byte("v2"), Nx: true})
				if code, msg, _ := rpcError(t, err); code != codes.AlreadyExists || msg != "key already exists" {
					t.Errorf("nx on a key present: %v %q", code, msg)
				}
				_, err = cc.Set(c, &api.SetRequest{Project: "shop", Name: name, Key: "k2", Value: []byte("v2"), Xx: true})
				if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "key not found" {
					t.Errorf("xx on a key absent: %v %q", code, msg)
				}
				ex := uint64(100)
				if _, err := cc.Set(c, &api.SetRequest{Project: "shop", Name: name, Key: "k2", Value: []byte("v2"), Ex: &ex}); err != nil {
					t.Fatal(err)
				}
				got, err = cc.Get(c, &api.GetRequest{Project: "shop", Name: name, Key: "k2"})
				if err != nil || string(got.Value) != "v2" || got.ExpiresInMs == nil || *got.ExpiresInMs > 100_000 || *got.ExpiresInMs < 90_000 {
					t.Fatalf("get of a key with 100 s to live: %v %v", got, err)
				}
				gs, err := cc.GetSet(c, &api.GetSetRequest{Project: "shop", Name: name, Key: "k1", Value: []byte("v3")})
				if err != nil || gs.Status != "set" || string(gs.OldValue) != "v1" {
					t.Fatalf("getset: %v %v", gs, err)
				}
				gs, err = cc.GetSet(c, &api.GetSetRequest{Project: "shop", Name: name, Key: "new", Value: []byte("n")})
				if err != nil || gs.OldValue != nil {
					t.Fatalf("getset of a new key: %v %v", gs, err)
				}
				if got := keys(t, cc, &api.KeysRequest{Project: "shop", Name: name}); len(got) != 3 || got[0] != "k1" || got[1] != "k2" || got[2] != "new" {
					t.Errorf("keys: %v", got)
				}
				pattern := "k*"
				if got := keys(t, cc, &api.KeysRequest{Project: "shop", Name: name, Pattern: &pattern}); len(got) != 2 {
					t.Errorf("keys k*: %v", got)
				}
				del, err := cc.Del(c, &api.DelRequest{Project: "shop", Name: name, Key: "k1"})
				if err != nil || del.Status != "deleted" || del.Message != "Entries deleted count# 1" {
					t.Fatalf("del: %v %v", del, err)
				}
				del, err = cc.Del(c, &api.DelRequest{Project: "shop", Name: name, Key: "k1"})
				if err != nil || del.Message != "Entries deleted count# 0" {
					t.Fatalf("del again: %v %v", del, err)
				}
				_, err = cc.Get(c, &api.GetRequest{Project: "shop", Name: name, Key: "k1"})
				if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "key not found" {
					t.Errorf("get of a key deleted: %v %q", code, msg)
				}
			})
		}
		list, err := cc.ListCaches(c, &api.ListCachesRequest{Project: "shop"})
		if err != nil || len(list.Caches) != 2 || list.Caches[0].Name != "durable" || list.Caches[1].Name != "volatile" {
			t.Fatalf("list: %v %v", list, err)
		}
		for _, name := range []string{"durable", "volatile"} {
			del, err := cc.DeleteCache(c, &api.DeleteCacheRequest{Project: "shop", Name: name})
			if err != nil || del.Status != "deleted" || del.Message != "Cache is deleted successfully" {
				t.Fatalf("delete %s: %v %v", name, del, err)
			}
			_, err = cc.Get(c, &api.GetRequest{Project: "shop", Name: name, Key: "k2"})
			if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "cache not found '"+name+"'" {
				t.Errorf("get in a cache deleted: %v %q", code, msg)
			}
			// Created again under the same name, it starts empty.
			if _, err := cc.CreateCache(c, &api.CreateCacheRequest{Project: "shop", Name: name, Options: &api.CreateCacheOptions{Volatile: name == "volatile"}}); err != nil {
				t.Fatal(err)
			}
			if got := keys(t, cc, &api.KeysRequest{Project: "shop", Name: name}); len(got) != 0 {
				t.Errorf("%s created again holds %v", name, got)
			}
		}
		_, err = cc.DeleteCache(c, &api.DeleteCacheRequest{Project: "shop", Name: "none"})
		if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "cache not found 'none'" {
			t.Errorf("delete a cache absent: %v %q", code, msg)
		}
		_, err = cc.Set(c, &api.SetRequest{Project: "nope", Name: "durable", Key: "k", Value: []byte("v")})
		if code, msg, _ := rpcError(t, err); code != codes.NotFound || msg != "project doesn't exist 'nope'" {
			t.Errorf("set in a project absent: %v %q", code, msg)
		}
		_, err = cc.Set(c, &api.SetRequest{Project: "shop", Name: "durable", Key: "k", Value: make([]byte, 1<<20+1)})
		if code, _, _ := rpcError(t, err); code != codes.InvalidArgument {
			t.Errorf("a value past the bound: %v", err)
		}
	})
}

// keys reads a keys call's stream to its end, and returns its keys sorted.
func keys(t *testing.T, cc api.CacheClient, req *api.KeysRequest) []string {
	t.Helper()
	st, err := cc.Keys(ctx(t), req)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		page, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page.Keys...)
	}
	sort.Strings(out)
	return out
}
