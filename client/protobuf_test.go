package client

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// allRoutes are the routes the client calls.
var allRoutes = []*route{routeInfo, routeHealth, routeCreateDatabase, routeDropDatabase, routeListDatabases, routeDescribeDatabase,
	routeCreateCollection, routeDropCollection, routeListCollections, routeDescribeCollection, routeInsert, routeReplace,
	routeUpdate, routeDelete, routeRead, routeSearch, routeEvents, routePublish, routeSubscribe, routeBegin, routeCommit,
	routeRollback, routeCreateNamespace, routeListNamespaces, routeCreateApplication, routeListApplications,
	routeRotateApplicationSecret, routeDeleteApplication, routeRotateSigningKey, routeBackup, routeAccessToken}

// The client speaks the API's 2022 generation; Folio's definitions
// (internal/wire/tigrisv1) hold both. Where they differ from what the
// client's shapes say:
var (
	// the method the client calls by its 2022 name, which the server
	// serves beside the one declared;
	declaredAs = map[string]string{"/tigrisdata.auth.v1.Auth/getAccessToken": "/tigrisdata.auth.v1.Auth/GetAccessToken"}
	// the answer the server gives 2022's request, where the declared one
	// is 2023's;
	answers2022 = map[string]protoreflect.FullName{"/tigrisdata.v1.Tigris/DescribeDatabase": "tigrisdata.v1.DescribeDatabaseResponse2022"}
	// the fields the shapes name as the HTTP API's JSON does.
	httpNames = map[string]string{"tigrisdata.v1.PublishResponse.1001": "keys"}
)

// Every field a route's shapes name is the field of that number of the
// message in Folio's definitions, with its name (2022's db is 2023's
// project, at 1) and a kind that encodes as it does.
func TestShapesMatchPublishedMessages(t *testing.T) {
	for _, r := range allRoutes {
		if r.rpc == "" {
			continue
		}
		rpc := r.rpc
		if d, ok := declaredAs[rpc]; ok {
			rpc = d
		}
		service, method, _ := strings.Cut(strings.TrimPrefix(rpc, "/"), "/")
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
		if err != nil {
			t.Errorf("%s: %v", r.rpc, err)
			continue
		}
		m := d.(protoreflect.ServiceDescriptor).Methods().ByName(protoreflect.Name(method))
		if m == nil {
			t.Errorf("%s: no such method", r.rpc)
			continue
		}
		if m.IsStreamingServer() != r.stream || m.IsStreamingClient() {
			t.Errorf("%s: streams %v, the route says %v", r.rpc, m.IsStreamingServer(), r.stream)
		}
		out := m.Output()
		if name, ok := answers2022[r.rpc]; ok {
			d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
			if err != nil {
				t.Fatal(err)
			}
			out = d.(protoreflect.MessageDescriptor)
		}
		checkShape(t, r.rpc+" request", r.req, m.Input())
		checkShape(t, r.rpc+" answer", r.res, out)
	}
}

func checkShape(t *testing.T, where string, s *shape, md protoreflect.MessageDescriptor) {
	t.Helper()
	for _, f := range s.fields {
		key := string(md.FullName()) + "." + itoa(f.num)
		fd := md.Fields().ByNumber(protoreflect.FieldNumber(f.num))
		if fd == nil {
			t.Errorf("%s: %s has no field %d (%s)", where, md.FullName(), f.num, f.name)
			continue
		}
		name := string(fd.Name())
		if n, ok := httpNames[key]; ok {
			name = n
		} else if f.num == 1 && name == "project" {
			name = "db"
		}
		if name != f.name {
			t.Errorf("%s: field %s is %s, the shape names it %s", where, key, fd.Name(), f.name)
		}
		if fd.IsList() != f.repeated || fd.IsMap() != (f.kind == kMap) {
			t.Errorf("%s: field %s: list %v map %v, the shape has repeated %v kind %d", where, key, fd.IsList(), fd.IsMap(), f.repeated, f.kind)
		}
		want := map[kind][]protoreflect.Kind{
			kString: {protoreflect.StringKind}, kBytes: {protoreflect.BytesKind}, kJSON: {protoreflect.BytesKind},
			kInt:  {protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.EnumKind},
			kBool: {protoreflect.BoolKind}, kDouble: {protoreflect.DoubleKind},
			kTime: {protoreflect.MessageKind}, kMessage: {protoreflect.MessageKind}, kMap: {protoreflect.MessageKind},
		}[f.kind]
		ok := false
		for _, k := range want {
			ok = ok || fd.Kind() == k
		}
		if !ok {
			t.Errorf("%s: field %s is a %s, the shape's kind is %d", where, key, fd.Kind(), f.kind)
			continue
		}
		switch f.kind {
		case kTime:
			if fd.Message().FullName() != "google.protobuf.Timestamp" {
				t.Errorf("%s: field %s is a %s, not a Timestamp", where, key, fd.Message().FullName())
			}
		case kMessage:
			checkShape(t, where, f.sub, fd.Message())
		case kMap:
			checkShape(t, where, f.sub, fd.MapValue().Message())
		}
	}
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// A request encoded from the HTTP API's JSON decodes, with the server's
// messages, to the same values.
func TestEncodeAsPublished(t *testing.T) {
	body := `{"filter":{"b":1,"a":{"$gt":2}},"fields":{"name":1},"options":{"limit":5,"skip":2,"offset":"AQID","collation":{"case":"ci"}}}`
	b, err := routeRead.req.encode([]byte(body), params{db: "shop", collection: "users"}.values())
	if err != nil {
		t.Fatal(err)
	}
	var got api.ReadRequest
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	o := got.GetOptions()
	if got.Project != "shop" || got.Collection != "users" || string(got.Filter) != `{"b":1,"a":{"$gt":2}}` || string(got.Fields) != `{"name":1}` ||
		o.GetLimit() != 5 || o.GetSkip() != 2 || string(o.GetOffset()) != "\x01\x02\x03" || o.GetCollation().GetCase() != "ci" {
		t.Fatalf("decoded: %v", &got)
	}
	if _, err := routeRead.req.encode([]byte(`{"explain":true}`), nil); err == nil {
		t.Fatal("a member the message lacks was encoded")
	}
}

// An answer encoded with the server's messages decodes to the HTTP API's
// JSON.
func TestDecodeAsHTTP(t *testing.T) {
	avg := 2.5
	res := &api.SearchResponse{
		Hits: []*api.SearchHit{{Data: []byte(`{"name":"Ann"}`), Metadata: &api.SearchHitMeta{CreatedAt: timestamppb.New(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))}}},
		Facets: map[string]*api.SearchFacet{"city": {Counts: []*api.FacetCount{{Count: 2, Value: "Paris"}},
			Stats: &api.FacetStats{Avg: &avg, Count: -1}}},
		Meta: &api.SearchMetadata{Found: 1, TotalPages: 1, Page: &api.Page{Current: 1, Size: 20}},
	}
	b, err := proto.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	got, err := routeSearch.res.decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hits":[{"data":{"name":"Ann"},"metadata":{"created_at":"2026-01-02T03:04:05.000000006Z"}}],` +
		`"facets":{"city":{"counts":[{"count":2,"value":"Paris"}],"stats":{"avg":2.5,"count":-1}}},` +
		`"meta":{"found":1,"total_pages":1,"page":{"current":1,"size":20}}}`
	if string(got) != want {
		t.Fatalf("decoded\n%s\nwant\n%s", got, want)
	}
}

// Whatever bytes come, decode never panics, and a shape without fields
// of JSON bytes (which pass through as they are) answers valid JSON or an
// error.
func FuzzDecode(f *testing.F) {
	b, _ := proto.Marshal(&api.SearchResponse{Hits: []*api.SearchHit{{Data: []byte(`{}`)}}, Meta: &api.SearchMetadata{Found: 1},
		Facets: map[string]*api.SearchFacet{"x": {}}})
	f.Add(b)
	f.Add([]byte{0x0a, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		routeSearch.res.decode(b)
		routeEvents.res.decode(b)
		if out, err := pbStatus.decode(b); err == nil && !json.Valid(out) {
			t.Fatalf("decode %x: invalid JSON %s", b, out)
		}
	})
}

// A status reads as the API's error: the ErrorInfo's code (also one gRPC
// lacks), the message unescaped, the RetryInfo's delay.
func TestStatusError(t *testing.T) {
	st, err := grpcstatus.New(codes.Unknown, "x y").WithDetails(&errdetails.ErrorInfo{Reason: "METHOD_NOT_ALLOWED"},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	bin, err := proto.Marshal(st.Proto())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		md   http.Header
		want *Error
	}{
		{http.Header{"Grpc-Status": {"2"}, "Grpc-Message": {"x%20y"}, "Grpc-Status-Details-Bin": {base64.RawStdEncoding.EncodeToString(bin)}},
			&Error{Code: MethodNotAllowed, Message: "x y", RetryDelay: 1500 * time.Millisecond}},
		{http.Header{"Grpc-Status": {"10"}, "Grpc-Message": {"conflict"}}, &Error{Code: Aborted, Message: "conflict"}},
		{http.Header{"Grpc-Status": {"99"}, "Grpc-Status-Details-Bin": {"not base64!"}}, &Error{Code: Unknown}},
		{http.Header{"Grpc-Status": {"-1"}}, &Error{Code: Unknown}},
	} {
		var got *Error
		if !errors.As(statusError(tc.md), &got) || *got != *tc.want {
			t.Errorf("%v: %+v, want %+v", tc.md, got, tc.want)
		}
	}
	if err := statusError(http.Header{"Grpc-Status": {"0"}}); err != nil {
		t.Errorf("status 0: %v", err)
	}
}
