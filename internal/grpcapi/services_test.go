package grpcapi_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/foliodb/folio/internal/node"
	api "github.com/foliodb/folio/internal/wire/tigrisv1"
	"github.com/foliodb/folio/tests/backendtest"
)

// unbuilt are the methods Folio does not serve yet, each with what its
// UNIMPLEMENTED answer says is not implemented; a whole service's methods
// under "service/*". Building a call takes it off this list.
var unbuilt = map[string]string{
	"tigrisdata.observability.v1.Observability/QueryTimeSeriesMetrics": "metrics queries",
}

// aliases are methods served under a name of their own beside the
// generated one.
var aliases = []string{"tigrisdata.auth.v1.Auth/getAccessToken"}

// Every method of every service of the generated package (and the
// aliases) is registered: one not built yet answers UNIMPLEMENTED naming
// what is not implemented (the method, but where its HTTP path answers
// 501 with another name), and every other answers something else, here an
// error of its own for an empty request. gRPC's own "unknown service" or
// "unknown method" would say that no such call exists.
func TestEveryMethodIsRegistered(t *testing.T) {
	s := start(t, backendtest.OpenPebble(t), node.DefaultConfig())
	methods := append([]string(nil), aliases...)
	streams := map[string]bool{}
	n := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(fd.Path(), "tigrisdata/v1/") {
			return true
		}
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			n++
			for j := 0; j < sd.Methods().Len(); j++ {
				md := sd.Methods().Get(j)
				full := string(sd.FullName()) + "/" + string(md.Name())
				methods = append(methods, full)
				streams[full] = md.IsStreamingServer()
			}
		}
		return true
	})
	if n < 9 {
		t.Fatalf("%d services in the generated package, want at least Tigris, HealthAPI, Auth, User, Admin, Management, Observability, Search and Cache", n)
	}
	for _, full := range methods {
		t.Run(full, func(t *testing.T) {
			c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := call(c, s.conn, full, streams[full])
			want, isUnbuilt := unbuilt[full]
			if !isUnbuilt {
				want, isUnbuilt = unbuilt[full[:strings.LastIndex(full, "/")]+"/*"]
			}
			if want == "" {
				want = full
			}
			switch {
			case isUnbuilt:
				if code, msg, reason := rpcError(t, err); code != codes.Unimplemented || msg != want+" is not implemented by this server yet" || reason != "UNIMPLEMENTED" {
					t.Errorf("%v %q (%s), want UNIMPLEMENTED %q", code, msg, reason, want+" is not implemented by this server yet")
				}
			case err != nil:
				if code, msg, _ := rpcError(t, err); code == codes.Unimplemented {
					t.Errorf("%v %q: a call built answers UNIMPLEMENTED", code, msg)
				}
			}
		})
	}
}

// call calls a method with an empty request, and for a stream reads it to
// its end.
func call(c context.Context, conn *grpc.ClientConn, full string, stream bool) error {
	if !stream {
		return conn.Invoke(c, "/"+full, &emptypb.Empty{}, &emptypb.Empty{})
	}
	st, err := conn.NewStream(c, &grpc.StreamDesc{ServerStreams: true}, "/"+full)
	if err != nil {
		return err
	}
	if err := st.SendMsg(&emptypb.Empty{}); err != nil {
		return err
	}
	if err := st.CloseSend(); err != nil {
		return err
	}
	for {
		if err := st.RecvMsg(&emptypb.Empty{}); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// DescribeDatabase answers each generation in its own message: 2022's
// request (the name alone) gets DescribeDatabaseResponse2022, 2023's (with
// a branch, or a schema format) DescribeDatabaseResponse, whose fields are
// numbered otherwise; both with Folio's sizes.
func TestDescribeDatabaseAnswersEachGeneration(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := start(t, b.Open(t), node.DefaultConfig())
		withUsers(t, s)
		if _, err := s.rpc.Insert(ctx(t), &api.InsertRequest{Project: "db1", Collection: "users", Documents: [][]byte{[]byte(`{"id":1,"name":"ann"}`)}}); err != nil {
			t.Fatal(err)
		}

		old, err := describeDatabase2022(ctx(t), s.conn, "db1")
		if err != nil {
			t.Fatal(err)
		}
		if old.Db != "db1" || old.Size <= 0 || len(old.Collections) != 1 || old.Collections[0].Collection != "users" ||
			old.Sizes.GetDocuments() != old.Size || old.Sizes.GetIndexes() <= 0 || old.Collections[0].Sizes.GetDocuments() != old.Size {
			t.Errorf("2022's describe: %v", old)
		}

		for _, req := range []*api.DescribeDatabaseRequest{{Project: "db1", Branch: "main"}, {Project: "db1", SchemaFormat: "go"}} {
			desc, err := s.rpc.DescribeDatabase(ctx(t), req)
			if err != nil {
				t.Fatalf("2023's describe (%v): %v", req, err)
			}
			if desc.Metadata == nil || desc.Size != old.Size || len(desc.Collections) != 1 || desc.Collections[0].Collection != "users" ||
				desc.Sizes.GetDocuments() != old.Size || desc.Collections[0].Sizes.GetIndexes() != old.Collections[0].Sizes.GetIndexes() {
				t.Errorf("2023's describe (%v): %v", req, desc)
			}
		}
		// 2023's answer read as 2022's fails, and the other way round: the
		// shapes are not interchangeable, so the test above tells them apart.
		if _, err := s.rpc.DescribeDatabase(ctx(t), &api.DescribeDatabaseRequest{Project: "db1"}); err == nil {
			t.Error("2022's answer decoded as 2023's message")
		}
	})
}
