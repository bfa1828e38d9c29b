package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	"github.com/foliodb/folio/internal/ops"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// Management (2023) and User (2022): metadata, the namespace's and each
// application's own. The value's bytes are one JSON value, as over HTTP.

func (s *Server) metadata(ctx context.Context, call func(context.Context, ops.Caller, ops.MetadataRequest) (*ops.Metadata, error), key string, value []byte) (*ops.Metadata, error) {
	md, err := call(ctx, caller(ctx), ops.MetadataRequest{Key: key, Value: value})
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return md, nil
}

func (m managementService) InsertUserMetadata(ctx context.Context, req *api.InsertUserMetadataRequest) (*api.InsertUserMetadataResponse, error) {
	md, err := m.s.metadata(ctx, m.s.ops.InsertUserMetadata, req.GetMetadataKey(), req.GetValue())
	if err != nil {
		return nil, err
	}
	return &api.InsertUserMetadataResponse{MetadataKey: md.Key, UserId: md.App, NamespaceId: uint32(md.NamespaceID), Value: md.Value}, nil
}

func (m managementService) GetUserMetadata(ctx context.Context, req *api.GetUserMetadataRequest) (*api.GetUserMetadataResponse, error) {
	md, err := m.s.metadata(ctx, m.s.ops.GetUserMetadata, req.GetMetadataKey(), nil)
	if err != nil {
		return nil, err
	}
	return &api.GetUserMetadataResponse{MetadataKey: md.Key, UserId: md.App, NamespaceId: uint32(md.NamespaceID), Value: md.Value}, nil
}

func (m managementService) UpdateUserMetadata(ctx context.Context, req *api.UpdateUserMetadataRequest) (*api.UpdateUserMetadataResponse, error) {
	md, err := m.s.metadata(ctx, m.s.ops.UpdateUserMetadata, req.GetMetadataKey(), req.GetValue())
	if err != nil {
		return nil, err
	}
	return &api.UpdateUserMetadataResponse{MetadataKey: md.Key, UserId: md.App, NamespaceId: uint32(md.NamespaceID), Value: md.Value}, nil
}

func (m managementService) InsertNamespaceMetadata(ctx context.Context, req *api.InsertNamespaceMetadataRequest) (*api.InsertNamespaceMetadataResponse, error) {
	md, err := m.s.metadata(ctx, m.s.ops.InsertNamespaceMetadata, req.GetMetadataKey(), req.GetValue())
	if err != nil {
		return nil, err
	}
	return &api.InsertNamespaceMetadataResponse{MetadataKey: md.Key, NamespaceId: uint32(md.NamespaceID), Value: md.Value}, nil
}

func (m managementService) GetNamespaceMetadata(ctx context.Context, req *api.GetNamespaceMetadataRequest) (*api.GetNamespaceMetadataResponse, error) {
	md, err := m.s.metadata(ctx, m.s.ops.GetNamespaceMetadata, req.GetMetadataKey(), nil)
	if err != nil {
		return nil, err
	}
	return &api.GetNamespaceMetadataResponse{MetadataKey: md.Key, NamespaceId: uint32(md.NamespaceID), Value: md.Value}, nil
}

func (m managementService) UpdateNamespaceMetadata(ctx context.Context, req *api.UpdateNamespaceMetadataRequest) (*api.UpdateNamespaceMetadataResponse, error) {
	md, err := m.s.metadata(ctx, m.s.ops.UpdateNamespaceMetadata, req.GetMetadataKey(), req.GetValue())
	if err != nil {
		return nil, err
	}
	return &api.UpdateNamespaceMetadataResponse{MetadataKey: md.Key, NamespaceId: uint32(md.NamespaceID), Value: md.Value}, nil
}

// 2022's User service: the same calls, under the messages 2023 moved to
// Management (the same on the wire).

func (u userService) InsertUserMetadata(ctx context.Context, req *api.InsertUserMetadataRequest) (*api.InsertUserMetadataResponse, error) {
	return managementService{s: u.s}.InsertUserMetadata(ctx, req)
}

func (u userService) GetUserMetadata(ctx context.Context, req *api.GetUserMetadataRequest) (*api.GetUserMetadataResponse, error) {
	return managementService{s: u.s}.GetUserMetadata(ctx, req)
}

func (u userService) UpdateUserMetadata(ctx context.Context, req *api.UpdateUserMetadataRequest) (*api.UpdateUserMetadataResponse, error) {
	return managementService{s: u.s}.UpdateUserMetadata(ctx, req)
}

// Observability's quota calls, registered beside GetInfo on the service
// otherwise unbuilt (registerUnbuiltServices). ReadUnits and WriteUnits
// are both the namespace's requests a second, as over HTTP.

func (s *Server) quotaLimits(ctx context.Context, _ *api.QuotaLimitsRequest) (*api.QuotaLimitsResponse, error) {
	l, err := s.ops.QuotaLimits(ctx, caller(ctx))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.QuotaLimitsResponse{ReadUnits: l.Quota.RequestsPerSecond, WriteUnits: l.Quota.RequestsPerSecond, StorageSize: l.Quota.StorageBytes}, nil
}

func (s *Server) quotaUsage(ctx context.Context, _ *api.QuotaUsageRequest) (*api.QuotaUsageResponse, error) {
	u, err := s.ops.QuotaUsage(ctx, caller(ctx))
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	return &api.QuotaUsageResponse{ReadUnits: u.RequestsLastSecond, WriteUnits: u.RequestsLastSecond, StorageSize: u.StorageBytes,
		ReadUnitsThrottled: u.Refused, WriteUnitsThrottled: u.Refused, StorageSizeThrottled: u.StorageRefused}, nil
}

// unaryMethod is a method of a service registered by hand: its request
// decoded into a new In, then call, through the server's interceptors
// like any call.
func unaryMethod[In any, Out any](s *Server, name, full string, call func(context.Context, *In) (*Out, error)) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := new(In)
		if err := dec(in); err != nil {
			return nil, err
		}
		run := func(ctx context.Context, req any) (any, error) { return call(ctx, req.(*In)) }
		if interceptor == nil {
			return run(ctx, in)
		}
		return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: s, FullMethod: full}, run)
	}}
}
