package grpcapi

import (
	"context"
	"fmt"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// cacheService is the final API's service tigrisdata.cache.v1.Cache, over
// the same ops calls as HTTP's /v1/projects/{project}/caches. A value is
// bytes here, kept as they come.
type cacheService struct {
	api.UnsafeCacheServer
	s *Server
}

func (v cacheService) CreateCache(ctx context.Context, req *api.CreateCacheRequest) (*api.CreateCacheResponse, error) {
	o := req.GetOptions()
	r := ops.CacheRequest{Project: req.GetProject(), Name: req.GetName(), Options: ops.CacheOptions{TTLMs: o.GetTtlMs(), Volatile: o.GetVolatile()}}
	if err := v.s.ops.CreateCache(ctx, caller2023(ctx), r); err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.CreateCacheResponse{Status: "created", Message: "Cache is created successfully"}, nil
}

func (v cacheService) DeleteCache(ctx context.Context, req *api.DeleteCacheRequest) (*api.DeleteCacheResponse, error) {
	if err := v.s.ops.DeleteCache(ctx, caller2023(ctx), ops.CacheRequest{Project: req.GetProject(), Name: req.GetName()}); err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.DeleteCacheResponse{Status: "deleted", Message: "Cache is deleted successfully"}, nil
}

func (v cacheService) ListCaches(ctx context.Context, req *api.ListCachesRequest) (*api.ListCachesResponse, error) {
	names, err := v.s.ops.ListCaches(ctx, caller2023(ctx), ops.CacheRequest{Project: req.GetProject()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	out := &api.ListCachesResponse{Caches: make([]*api.CacheMetadata, len(names))}
	for i, n := range names {
		out.Caches[i] = &api.CacheMetadata{Name: n}
	}
	return out, nil
}

func (v cacheService) Set(ctx context.Context, req *api.SetRequest) (*api.SetResponse, error) {
	r := ops.CacheKeyRequest{Project: req.GetProject(), Cache: req.GetName(), Key: req.GetKey(), Value: req.GetValue(),
		Set: ops.CacheSetOptions{EX: req.GetEx(), PX: req.GetPx(), NX: req.GetNx(), XX: req.GetXx()}}
	if err := v.s.ops.CacheSet(ctx, caller2023(ctx), r); err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.SetResponse{Status: "set", Message: "Key is set successfully"}, nil
}

func (v cacheService) GetSet(ctx context.Context, req *api.GetSetRequest) (*api.GetSetResponse, error) {
	r := ops.CacheKeyRequest{Project: req.GetProject(), Cache: req.GetName(), Key: req.GetKey(), Value: req.GetValue()}
	old, found, err := v.s.ops.CacheGetSet(ctx, caller2023(ctx), r)
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	out := &api.GetSetResponse{Status: "set", Message: "Key is set successfully"}
	if found {
		out.OldValue = old
	}
	return out, nil
}

func (v cacheService) Get(ctx context.Context, req *api.GetRequest) (*api.GetResponse, error) {
	got, err := v.s.ops.CacheGet(ctx, caller2023(ctx), ops.CacheKeyRequest{Project: req.GetProject(), Cache: req.GetName(), Key: req.GetKey()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	out := &api.GetResponse{Value: got.Value}
	if got.Left > 0 {
		ms := uint64(got.Left.Milliseconds())
		out.ExpiresInMs = &ms
	}
	return out, nil
}

func (v cacheService) Del(ctx context.Context, req *api.DelRequest) (*api.DelResponse, error) {
	n, err := v.s.ops.CacheDel(ctx, caller2023(ctx), ops.CacheKeyRequest{Project: req.GetProject(), Cache: req.GetName(), Key: req.GetKey()})
	if err != nil {
		return nil, v.s.fail(ctx, err)
	}
	return &api.DelResponse{Status: "deleted", Message: fmt.Sprintf("Entries deleted count# %d", n)}, nil
}

// Keys streams the keys a page at a time, one KeysResponse each.
func (v cacheService) Keys(req *api.KeysRequest, stream api.Cache_KeysServer) error {
	ctx := stream.Context()
	r := ops.CacheKeysRequest{Project: req.GetProject(), Cache: req.GetName(),
		Keys: ops.CacheKeys{Pattern: req.GetPattern(), Cursor: req.GetCursor(), Count: req.GetCount()}}
	sender := newTimedSender(stream, v.s.writeTimeout)
	defer sender.close()
	err := v.s.ops.CacheKeys(ctx, caller2023(ctx), r, func(p ops.CacheKeysPage) error {
		cursor := p.Cursor
		return sender.send(&api.KeysResponse{Keys: p.Keys, Cursor: &cursor})
	})
	if err != nil {
		return v.s.fail(ctx, err)
	}
	return nil
}
