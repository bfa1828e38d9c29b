package main

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

const project = "bench"

// setupFolio creates the project and its two caches.
func setupFolio(ctx context.Context, addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := api.NewTigrisClient(conn).CreateProject(ctx, &api.CreateProjectRequest{Project: project}); err != nil && status.Code(err) != codes.AlreadyExists {
		return fmt.Errorf("create project: %w", err)
	}
	cc := api.NewCacheClient(conn)
	for name, volatile := range map[string]bool{"volatile": true, "durable": false} {
		_, err := cc.CreateCache(ctx, &api.CreateCacheRequest{Project: project, Name: name, Options: &api.CreateCacheOptions{Volatile: volatile}})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return fmt.Errorf("create cache %s: %w", name, err)
		}
	}
	return nil
}

// folioSide makes clients of cache name, each with a gRPC connection of
// its own.
func folioSide(name, addr, cache string, cpu func() (time.Duration, error)) side {
	return side{name: name, cpu: cpu, client: func() (*client, error) {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, err
		}
		cc := api.NewCacheClient(conn)
		ctx := context.Background()
		return &client{
			set: func(k string, v []byte) error {
				_, err := cc.Set(ctx, &api.SetRequest{Project: project, Name: cache, Key: k, Value: v})
				return err
			},
			get: func(k string) error {
				_, err := cc.Get(ctx, &api.GetRequest{Project: project, Name: cache, Key: k})
				if status.Code(err) == codes.NotFound {
					return nil // as Redis's nil: an answer
				}
				return err
			},
			close: func() { conn.Close() },
		}, nil
	}}
}
