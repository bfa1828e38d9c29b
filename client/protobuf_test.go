package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	api "github.com/foliodb/folio/internal/wire/tigrisv1"
)

// allRoutes are the routes the client calls.
var allRoutes = []*route{routeInfo, routeHealth, routeCreateDatabase, routeDropDatabase, routeListDatabases, routeDescribeDatabase,
	routeCreateCollection, routeDropCollection, routeListCollections, routeDescribeCollection, routeInsert, routeReplace,
	routeUpdate, routeDelete, routeRead, routeSearch, routeAggregate, routeEvents, routePublish, routeSubscribe, routeBegin, routeCommit,
	routeRollback, routeCreateNamespace, routeListNamespaces, routeDeleteNamespace, routeCreateApplication, routeListApplications,
	routeRotateApplicationSecret, routeDeleteApplication, routeRotateSigningKey, routeBackup, routeAccessToken}

// Each route names the messages of the method it calls, as the
// definitions declare them (shapes_gen.go's grpcMethods, which the
// generator reads from them), and every method the generator was told
// the client calls has a route.
func TestRoutesCallTheirMethods(t *testing.T) {
	called := map[string]bool{}
	for _, r := range allRoutes {
		if r.rpc == "" {
			if r.req != nil || r.res != nil {
				t.Errorf("%s %s: shapes without a gRPC method", r.method, r.path)
			}
			continue
		}
		called[r.rpc] = true
		m, ok := grpcMethods[r.rpc]
		if !ok {
			t.Errorf("%s: not a method the client calls: add it to internal/shapegen's calls and run go generate", r.rpc)
			continue
		}
		if r.req != m.req {
			t.Errorf("%s: the route sends %s, the method takes %s", r.rpc, r.req.name, m.req.name)
		}
		if r.res != m.res {
			t.Errorf("%s: the route reads %s, the method answers %s", r.rpc, r.res.name, m.res.name)
		}
		if r.stream != m.stream {
			t.Errorf("%s: the route says stream %v, the method %v", r.rpc, r.stream, m.stream)
		}
	}
	for rpc := range grpcMethods {
		if !called[rpc] {
			t.Errorf("%s: no route calls it: remove it from internal/shapegen's calls, or add the route to allRoutes", rpc)
		}
	}
}

// shapes_gen.go is what internal/shapegen writes from the definitions
// as they are: it fails while it is stale.
func TestShapesAreFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator (seconds)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH to run the generator")
	}
	fresh := filepath.Join(t.TempDir(), "shapes_gen.go")
	if out, err := exec.Command(goTool, "run", "./internal/shapegen", "-o", fresh).CombinedOutput(); err != nil {
		t.Fatalf("internal/shapegen: %v\n%s", err, out)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("shapes_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("shapes_gen.go differs from what internal/shapegen writes: stale, run go generate ./client/")
	}
}

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
	// A member the message lacks, and 2023's name of 2022's db, which the
	// client's JSON does not use.
	for _, body := range []string{`{"explain":true}`, `{"project":"shop"}`, `{"options":{"limit":1,"explain":true}}`} {
		if _, err := routeRead.req.encode([]byte(body), nil); err == nil {
			t.Errorf("%s: a member the message lacks was encoded", body)
		}
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
		`"meta":{"found":1,"total_pages":1,"page":{"current":1,"size":20},"matched_fields":[]},"group":[]}`
	if string(got) != want {
		t.Fatalf("decoded\n%s\nwant\n%s", got, want)
	}
}

// A map's entry without its value (protobuf leaves a zero value out)
// reads as the value's zero: {} for a message, "" for a string.
func TestDecodeMapEntriesWithoutValue(t *testing.T) {
	info, err := proto.MarshalOptions{Deterministic: true}.Marshal(&errdetails.ErrorInfo{Reason: "R", Metadata: map[string]string{"k": "", "l": "v"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b     []byte
		shape *shape
		want  string
	}{
		// facets (2), an entry of key (1) "city" alone: Go's protobuf writes
		// an empty message's value, other encoders need not.
		{[]byte{2<<3 | 2, 6, 1<<3 | 2, 4, 'c', 'i', 't', 'y'}, shapeSearchResponse, `{"hits":[],"facets":{"city":{}},"group":[]}`},
		{info, shapeErrorInfo, `{"reason":"R","metadata":{"k":"","l":"v"}}`},
	} {
		got, err := tc.shape.decode(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: decoded %s, want %s", tc.shape.name, got, tc.want)
		}
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
		if out, err := shapeStatus.decode(b); err == nil && !json.Valid(out) {
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
