package grpcapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// Metadata over gRPC, under 2023's Management and 2022's User names (the
// same values), and the quota calls: limits report the namespace's quota,
// and a write past its storage is RESOURCE_EXHAUSTED with RetryInfo and
// writes nothing.
func TestMetadataAndQuotasOverGRPC(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		management, users, o11y := api.NewManagementClient(s.conn), api.NewUserClient(s.conn), api.NewObservabilityClient(s.conn)

		ins, err := management.InsertNamespaceMetadata(ctx(t), &api.InsertNamespaceMetadataRequest{MetadataKey: "flags", Value: []byte(`{"on":true}`)})
		if err != nil || ins.MetadataKey != "flags" || ins.NamespaceId != 1 || string(ins.Value) != `{"on":true}` {
			t.Fatalf("insert: %v %v", ins, err)
		}
		_, err = management.InsertNamespaceMetadata(ctx(t), &api.InsertNamespaceMetadataRequest{MetadataKey: "flags", Value: []byte(`1`)})
		if _, msg, reason := rpcError(t, err); reason != "INTERNAL" || msg != "Failed to insert namespace metadata." {
			t.Errorf("insert again: %v %q", reason, msg)
		}
		got, err := management.GetNamespaceMetadata(ctx(t), &api.GetNamespaceMetadataRequest{MetadataKey: "flags"})
		if err != nil || string(got.Value) != `{"on":true}` {
			t.Errorf("get: %v %v", got, err)
		}
		if _, err := users.UpdateUserMetadata(ctx(t), &api.UpdateUserMetadataRequest{MetadataKey: "prefs", Value: []byte(`"fr"`)}); err != nil {
			t.Fatal(err)
		}
		mine, err := management.GetUserMetadata(ctx(t), &api.GetUserMetadataRequest{MetadataKey: "prefs"})
		if err != nil || string(mine.Value) != `"fr"` {
			t.Errorf("2022's update, then 2023's get: %v %v", mine, err)
		}
		none, err := management.GetUserMetadata(ctx(t), &api.GetUserMetadataRequest{MetadataKey: "none"})
		if err != nil || none.Value != nil {
			t.Errorf("get of a key that holds none: %v %v", none, err)
		}
		_, err = management.UpdateUserMetadata(ctx(t), &api.UpdateUserMetadataRequest{MetadataKey: "bad", Value: []byte(`{`)})
		if _, _, reason := rpcError(t, err); reason != "INVALID_ARGUMENT" {
			t.Errorf("a value that is not JSON: %v", err)
		}

		withUsers(t, s)
		doc := func(id int) []byte { return fmt.Appendf(nil, `{"id":%d,"name":"%s"}`, id, strings.Repeat("n", 300)) }
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{doc(1)}}); err != nil {
			t.Fatal(err)
		}
		usage, err := o11y.QuotaUsage(ctx(t), &api.QuotaUsageRequest{})
		if err != nil || usage.StorageSize < 300 {
			t.Fatalf("usage: %v %v", usage, err)
		}
		// Anonymous on a server without --auth is the owner.
		if code, body, _ := httpDo(t, s.http1, "POST", s.base+"/v1/management/namespaces/default_namespace/quota",
			fmt.Sprintf(`{"storage_bytes":%d}`, usage.StorageSize+50)); code != 200 {
			t.Fatalf("set quota: %d %s", code, body)
		}
		limits, err := o11y.QuotaLimits(ctx(t), &api.QuotaLimitsRequest{})
		if err != nil || limits.StorageSize != usage.StorageSize+50 || limits.ReadUnits != 0 {
			t.Errorf("limits: %v %v", limits, err)
		}
		_, err = s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{doc(2)}})
		if _, msg, reason := rpcError(t, err); reason != "RESOURCE_EXHAUSTED" || !strings.HasPrefix(msg, "data size limit exceeded") || retryDelay(err) <= 0 {
			t.Errorf("insert past the quota: %v %q, retry in %s", reason, msg, retryDelay(err))
		}
		if docs := readAll(t, s, ctx(t), `{}`); len(docs) != 1 {
			t.Errorf("after the refused insert: %d documents", len(docs))
		}
		after, err := o11y.QuotaUsage(ctx(t), &api.QuotaUsageRequest{})
		if err != nil || after.StorageSize != usage.StorageSize || after.StorageSizeThrottled != 1 {
			t.Errorf("usage after the refusal: %v %v", after, err)
		}
	})
}

// retryDelay is the delay an error's RetryInfo advises (0: none).
func retryDelay(err error) time.Duration {
	for _, d := range grpcstatus.Convert(err).Details() {
		if info, ok := d.(*errdetails.RetryInfo); ok {
			return info.RetryDelay.AsDuration()
		}
	}
	return 0
}
