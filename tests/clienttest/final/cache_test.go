package finalclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"slices"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	httpapi "github.com/tigrisdata/tigris-client-go/api/client/v1/api"
	api "github.com/tigrisdata/tigris-client-go/api/server/v1"
)

// The final Go client has no cache package: an application reaches the
// Cache service through the client's generated API, its gRPC CacheClient
// (api/server/v1) or its HTTP client (api/client/v1/api), as below on the
// transport FOLIO_URL names.

// TestCacheFlow makes every cache call through the client's generated API:
// a cache created (and refused again), set with and without conditions,
// get, getset, del, keys with a pattern, list, delete.
func TestCacheFlow(t *testing.T) {
	ctx, e, _ := projectFlow(t)
	if e.http {
		c, err := httpapi.NewClientWithResponses(e.url)
		if err != nil {
			t.Fatal(err)
		}
		httpCacheFlow(ctx, t, c, e.project)
	} else {
		u, _ := url.Parse(e.url)
		conn, err := grpc.Dial(u.Host, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		grpcCacheFlow(ctx, t, api.NewCacheClient(conn), e.project)
	}
}

// grpcCacheFlow makes every cache call on a cache "sessions" of project p,
// which it creates and deletes, through c (with or without credentials).
func grpcCacheFlow(ctx context.Context, t *testing.T, c api.CacheClient, p string) {
	if _, err := c.CreateCache(ctx, &api.CreateCacheRequest{Project: p, Name: "sessions"}); err != nil {
		t.Fatalf("CreateCache: %v", err)
	}
	_, err := c.CreateCache(ctx, &api.CreateCacheRequest{Project: p, Name: "sessions"})
	if status.Code(err) != codes.AlreadyExists {
		t.Errorf("CreateCache again: %v, want ALREADY_EXISTS", err)
	}
	set, err := c.Set(ctx, &api.SetRequest{Project: p, Name: "sessions", Key: "user:1", Value: []byte(`{"n":1}`)})
	if err != nil || set.Status != "set" {
		t.Fatalf("Set: %v %v", set, err)
	}
	ex := uint64(60)
	if _, err := c.Set(ctx, &api.SetRequest{Project: p, Name: "sessions", Key: "user:2", Value: []byte(`2`), Ex: &ex, Nx: true}); err != nil {
		t.Errorf("Set nx ex: %v", err)
	}
	_, err = c.Set(ctx, &api.SetRequest{Project: p, Name: "sessions", Key: "user:2", Value: []byte(`3`), Nx: true})
	if status.Code(err) != codes.AlreadyExists {
		t.Errorf("Set nx of a key present: %v", err)
	}
	got, err := c.Get(ctx, &api.GetRequest{Project: p, Name: "sessions", Key: "user:1"})
	if err != nil || string(got.Value) != `{"n":1}` {
		t.Errorf("Get: %v %v", got, err)
	}
	gs, err := c.GetSet(ctx, &api.GetSetRequest{Project: p, Name: "sessions", Key: "user:1", Value: []byte(`{"n":2}`)})
	if err != nil || string(gs.OldValue) != `{"n":1}` {
		t.Errorf("GetSet: %v %v", gs, err)
	}
	if _, err := c.Set(ctx, &api.SetRequest{Project: p, Name: "sessions", Key: "other", Value: []byte(`0`)}); err != nil {
		t.Error(err)
	}
	pattern := "user:*"
	st, err := c.Keys(ctx, &api.KeysRequest{Project: p, Name: "sessions", Pattern: &pattern})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for {
		page, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Keys: %v", err)
		}
		keys = append(keys, page.Keys...)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"user:1", "user:2"}) {
		t.Errorf("Keys user:*: %v", keys)
	}
	del, err := c.Del(ctx, &api.DelRequest{Project: p, Name: "sessions", Key: "user:1"})
	if err != nil || del.Message != "Entries deleted count# 1" {
		t.Errorf("Del: %v %v", del, err)
	}
	_, err = c.Get(ctx, &api.GetRequest{Project: p, Name: "sessions", Key: "user:1"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Get of a key deleted: %v", err)
	}
	list, err := c.ListCaches(ctx, &api.ListCachesRequest{Project: p})
	if err != nil || len(list.Caches) != 1 || list.Caches[0].Name != "sessions" {
		t.Errorf("ListCaches: %v %v", list, err)
	}
	if _, err := c.DeleteCache(ctx, &api.DeleteCacheRequest{Project: p, Name: "sessions"}); err != nil {
		t.Errorf("DeleteCache: %v", err)
	}
	_, err = c.Get(ctx, &api.GetRequest{Project: p, Name: "sessions", Key: "user:2"})
	if status.Code(err) != codes.NotFound {
		t.Errorf("Get in a cache deleted: %v", err)
	}
}

// httpCacheFlow is grpcCacheFlow over HTTP, through the client's
// generated HTTP API.
func httpCacheFlow(ctx context.Context, t *testing.T, c *httpapi.ClientWithResponses, p string) {
	if r, err := c.CacheCreateCacheWithResponse(ctx, p, "sessions", httpapi.CreateCacheRequest{}); err != nil || r.StatusCode() != 200 {
		t.Fatalf("CacheCreateCache: %v %v", r, err)
	}
	if r, err := c.CacheCreateCacheWithResponse(ctx, p, "sessions", httpapi.CreateCacheRequest{}); err != nil || r.StatusCode() != 409 {
		t.Errorf("CacheCreateCache again: %v %v, want 409", r, err)
	}
	value := []byte("hello")
	r, err := c.CacheSetWithResponse(ctx, p, "sessions", "user:1", httpapi.SetRequest{Value: &value})
	if err != nil || r.JSON200 == nil || *r.JSON200.Status != "set" {
		t.Fatalf("CacheSet: %v %v", r, err)
	}
	ex, nx := uint64(60), true
	if r, err := c.CacheSetWithResponse(ctx, p, "sessions", "user:2", httpapi.SetRequest{Value: &value, Ex: &ex, Nx: &nx}); err != nil || r.StatusCode() != 200 {
		t.Errorf("CacheSet nx ex: %v %v", r, err)
	}
	if r, err := c.CacheSetWithResponse(ctx, p, "sessions", "user:2", httpapi.SetRequest{Value: &value, Nx: &nx}); err != nil || r.StatusCode() != 409 {
		t.Errorf("CacheSet nx of a key present: %v %v", r, err)
	}
	// The client sends bytes as base64, which the server keeps as the
	// JSON it is and answers as it came: the client reads back its bytes.
	got, err := c.CacheGetWithResponse(ctx, p, "sessions", "user:1")
	if err != nil || got.JSON200 == nil || !bytes.Equal(*got.JSON200.Value, value) {
		t.Errorf("CacheGet: %v %v", got, err)
	}
	if got, err := c.CacheGetWithResponse(ctx, p, "sessions", "user:2"); err != nil || got.JSON200 == nil || got.JSON200.ExpiresInMs == nil || *got.JSON200.ExpiresInMs > 60_000 {
		t.Errorf("CacheGet of a key with a minute to live: %v %v", got, err)
	}
	next := []byte("again")
	gs, err := c.CacheGetSetWithResponse(ctx, p, "sessions", "user:1", httpapi.GetSetRequest{Value: &next})
	if err != nil || gs.JSON200 == nil || gs.JSON200.OldValue == nil || !bytes.Equal(*gs.JSON200.OldValue, value) {
		t.Errorf("CacheGetSet: %v %v", gs, err)
	}
	pattern := "user:*"
	keys, err := c.CacheKeysWithResponse(ctx, p, "sessions", &httpapi.CacheKeysParams{Pattern: &pattern})
	if err != nil || keys.StatusCode() != 200 {
		t.Fatalf("CacheKeys: %v %v", keys, err)
	}
	var found []string
	dec := json.NewDecoder(bytes.NewReader(keys.Body))
	for dec.More() {
		var line struct {
			Result struct{ Keys []string } `json:"result"`
		}
		if err := dec.Decode(&line); err != nil {
			t.Fatalf("CacheKeys line: %v", err)
		}
		found = append(found, line.Result.Keys...)
	}
	slices.Sort(found)
	if !slices.Equal(found, []string{"user:1", "user:2"}) {
		t.Errorf("CacheKeys user:*: %v", found)
	}
	del, err := c.CacheDelWithResponse(ctx, p, "sessions", "user:1", httpapi.DelRequest{})
	if err != nil || del.JSON200 == nil || *del.JSON200.Message != "Entries deleted count# 1" {
		t.Errorf("CacheDel: %v %v", del, err)
	}
	if got, err := c.CacheGetWithResponse(ctx, p, "sessions", "user:1"); err != nil || got.StatusCode() != 404 {
		t.Errorf("CacheGet of a key deleted: %v %v", got, err)
	}
	list, err := c.CacheListCachesWithResponse(ctx, p)
	if err != nil || list.JSON200 == nil || len(*list.JSON200.Caches) != 1 {
		t.Errorf("CacheListCaches: %v %v", list, err)
	}
	if r, err := c.CacheDeleteCacheWithResponse(ctx, p, "sessions", httpapi.DeleteCacheRequest{}); err != nil || r.StatusCode() != 200 {
		t.Errorf("CacheDeleteCache: %v %v", r, err)
	}
}
