package tigrisv1

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// The published definitions, as testdata/dumpdescriptors wrote them from
// tigris-client-go's generated code: 2022's generation (alpha.32, the
// /v1/databases API) and 2023's (v1.0.0, projects and branches).
var publishedGenerations = []string{"testdata/published-alpha.32.json", "testdata/published-v1.0.0.json"}

type published struct {
	Source   string                                `json:"source"`
	Messages map[string][]publishedField           `json:"messages"`
	Enums    map[string]map[string]int             `json:"enums"`
	Services map[string]map[string]publishedMethod `json:"services"`
}

type publishedField struct {
	Name        string `json:"name"`
	Number      int    `json:"number"`
	Kind        string `json:"kind"`
	Cardinality string `json:"cardinality"`
	Type        string `json:"type"`
	Map         bool   `json:"map"`
}

type publishedMethod struct {
	Input           string `json:"input"`
	Output          string `json:"output"`
	ClientStreaming bool   `json:"client_streaming"`
	ServerStreaming bool   `json:"server_streaming"`
}

// renamed maps a published message's or enum's full name to Folio's,
// where they differ (api/proto says why): a 2022 type that 2023 moved to
// another package with the same fields, or one that 2023 reshaped under
// the same name, which Folio keeps beside 2023's with the suffix 2022.
var renamed = map[string]string{
	"tigrisdata.v1.Error":                           "tigrisdata.observability.v1.Error",
	"tigrisdata.v1.ErrorDetails":                    "tigrisdata.observability.v1.ErrorDetails",
	"tigrisdata.v1.RetryInfo":                       "tigrisdata.observability.v1.RetryInfo",
	"tigrisdata.v1.GetInfoRequest":                  "tigrisdata.observability.v1.GetInfoRequest",
	"tigrisdata.v1.GetInfoResponse":                 "tigrisdata.observability.v1.GetInfoResponse",
	"tigrisdata.v1.Code":                            "tigrisdata.observability.v1.Code",
	"tigrisdata.user.v1.GetUserMetadataRequest":     "tigrisdata.management.v1.GetUserMetadataRequest",
	"tigrisdata.user.v1.GetUserMetadataResponse":    "tigrisdata.management.v1.GetUserMetadataResponse",
	"tigrisdata.user.v1.InsertUserMetadataRequest":  "tigrisdata.management.v1.InsertUserMetadataRequest",
	"tigrisdata.user.v1.InsertUserMetadataResponse": "tigrisdata.management.v1.InsertUserMetadataResponse",
	"tigrisdata.user.v1.UpdateUserMetadataRequest":  "tigrisdata.management.v1.UpdateUserMetadataRequest",
	"tigrisdata.user.v1.UpdateUserMetadataResponse": "tigrisdata.management.v1.UpdateUserMetadataResponse",
	"tigrisdata.admin.v1.CreateNamespaceRequest":    "tigrisdata.admin.v1.CreateNamespaceRequest2022",
	"tigrisdata.admin.v1.CreateNamespaceResponse":   "tigrisdata.admin.v1.CreateNamespaceResponse2022",
	"tigrisdata.admin.v1.ListNamespacesRequest":     "tigrisdata.admin.v1.ListNamespacesRequest2022",
	"tigrisdata.admin.v1.ListNamespacesResponse":    "tigrisdata.admin.v1.ListNamespacesResponse2022",
	"tigrisdata.admin.v1.NamespaceInfo":             "tigrisdata.admin.v1.NamespaceInfo2022",
	"tigrisdata.v1.DescribeDatabaseResponse":        "tigrisdata.v1.DescribeDatabaseResponse2022",
}

// The renames apply to 2022's definitions only.
const renamedIn = "testdata/published-alpha.32.json"

// Where a published definition is not followed on the wire, and why; keyed
// by generation file and message (or message.field) or service/method.
var notFollowed = map[string]string{
	renamedIn + " tigrisdata.observability.v1.QueryTimeSeriesMetricsRequest": "2023 renumbered it (branch at 2); Folio has 2023's numbers and serves neither",
	renamedIn + " tigrisdata.v1.DescribeCollectionRequest.options":           "2022's empty CollectionOptions at 3 reads as 2023's schema_format, an empty string",
	// The method's declared response is 2023's; a server answers 2022's
	// clients with DescribeDatabaseResponse2022 (compared above as a message).
	renamedIn + " tigrisdata.v1.Tigris/DescribeDatabase": "2022's response has its own shape",
}

// renamedMethods maps a published method (service/method) to Folio's
// declaration where the name differs: 2022's getAccessToken and 2023's
// GetAccessToken would have the same Go names.
var renamedMethods = map[string]string{
	"tigrisdata.auth.v1.Auth/getAccessToken": "tigrisdata.auth.v1.Auth/GetAccessToken",
}

// leftOut are the published services Folio does not define.
var leftOut = []string{"tigrisdata.billing.v1.Billing", "tigrisdata.realtime.v1.Realtime"}

// laterClientFields are fields below Folio's range that no published
// generation here has: sent by later 2022 clients (Go beta.13,
// @tigrisdata/core beta.21; internal/grpcapi's later_test.go checks the
// numbers), or answered by the final server, whose API (tigris-api at the
// commit v1.0.0-beta.122 records) is a month newer than the Go client
// v1.0.0 (DescribeCollectionResponse.search_status = 6).
var laterClientFields = []string{"tigrisdata.v1.SubscribeRequest.filter", "tigrisdata.v1.DescribeCollectionResponse.search_status"}

// folioMessages are the messages of Folio's own, which only Folio's
// fields hold, all numbers theirs.
var folioMessages = []string{"tigrisdata.v1.Sizes", "tigrisdata.auth.v1.CreatedInvitation",
	"tigrisdata.v1.AggregateRequest", "tigrisdata.v1.AggregateResponse", "tigrisdata.v1.AggregateExplanation"}

// folioServices are Folio's own services (folio.proto), which no
// published generation has: their methods are Folio's.
var folioServices = []string{"tigrisdata.v1.Folio"}

// folioFields is where Folio's own fields start.
const folioFields = 1001

func loadPublished(t *testing.T, path string) published {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var p published
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func ours(gen, name string) string {
	if gen == renamedIn {
		if n, ok := renamed[name]; ok {
			return n
		}
	}
	return name
}

// TestPublishedFieldsAreKept checks every published message's every field:
// Folio's message has a field of the same number, kind, cardinality and
// name (2022's db is 2023's project, at 1), of the corresponding type.
func TestPublishedFieldsAreKept(t *testing.T) {
	for _, gen := range publishedGenerations {
		p := loadPublished(t, gen)
		for name, fields := range p.Messages {
			if _, ok := notFollowed[gen+" "+name]; ok || isLeftOut(name) {
				continue
			}
			md := findMessage(t, ours(gen, name))
			if md == nil {
				t.Errorf("%s: %s: no message %s", gen, name, ours(gen, name))
				continue
			}
			for _, pf := range fields {
				if _, ok := notFollowed[gen+" "+name+"."+pf.Name]; ok {
					continue
				}
				compareField(t, gen, name, pf, md.Fields().ByNumber(protoreflect.FieldNumber(pf.Number)))
			}
		}
		for name, values := range p.Enums {
			if isLeftOut(name) {
				continue
			}
			ed := findEnum(t, ours(gen, name))
			if ed == nil {
				t.Errorf("%s: no enum %s", gen, ours(gen, name))
				continue
			}
			for v, n := range values {
				if got := ed.Values().ByName(protoreflect.Name(v)); got == nil || int(got.Number()) != n {
					t.Errorf("%s: %s.%s = %d is missing", gen, name, v, n)
				}
			}
		}
	}
}

func compareField(t *testing.T, gen, msg string, pf publishedField, f protoreflect.FieldDescriptor) {
	t.Helper()
	where := gen + ": " + msg + "." + pf.Name
	if f == nil {
		t.Errorf("%s (%d): no field of that number", where, pf.Number)
		return
	}
	if string(f.Name()) != pf.Name && !(pf.Name == "db" && f.Name() == "project" && pf.Number == 1) {
		t.Errorf("%s (%d): named %s", where, pf.Number, f.Name())
	}
	if f.Kind().String() != pf.Kind || f.Cardinality().String() != pf.Cardinality || f.IsMap() != pf.Map {
		t.Errorf("%s (%d): %s %s (map %v), published %s %s (map %v)", where, pf.Number, f.Cardinality(), f.Kind(), f.IsMap(), pf.Cardinality, pf.Kind, pf.Map)
		return
	}
	want := pf.Type
	got := typeName(f)
	if f.IsMap() {
		k, v, _ := strings.Cut(pf.Type, ",")
		want = k + "," + ours(gen, v)
		got = f.MapKey().Kind().String() + "," + typeName(f.MapValue())
		if typeName(f.MapValue()) == "" {
			got += f.MapValue().Kind().String()
		}
	} else if want != "" {
		want = ours(gen, want)
	}
	if got != want {
		t.Errorf("%s (%d): of type %s, published %s", where, pf.Number, got, want)
	}
}

func typeName(f protoreflect.FieldDescriptor) string {
	switch {
	case f.Message() != nil:
		return string(f.Message().FullName())
	case f.Enum() != nil:
		return string(f.Enum().FullName())
	}
	return "" // a scalar: its kind says all
}

// TestPublishedMethodsAreServed checks every published method of every
// service Folio defines: the same wire name, streaming and messages.
func TestPublishedMethodsAreServed(t *testing.T) {
	for _, gen := range publishedGenerations {
		p := loadPublished(t, gen)
		for svc, methods := range p.Services {
			if isLeftOut(svc) {
				continue
			}
			for name, pm := range methods {
				full := svc + "/" + name
				if r, ok := renamedMethods[full]; ok {
					full = r
				}
				md := findMethod(t, full)
				if md == nil {
					t.Errorf("%s: no method %s", gen, full)
					continue
				}
				if md.IsStreamingClient() != pm.ClientStreaming || md.IsStreamingServer() != pm.ServerStreaming {
					t.Errorf("%s: %s streams (client %v, server %v), published (%v, %v)", gen, full, md.IsStreamingClient(), md.IsStreamingServer(), pm.ClientStreaming, pm.ServerStreaming)
				}
				if _, ok := notFollowed[gen+" "+svc+"/"+name]; ok {
					continue
				}
				if got, want := string(md.Input().FullName()), ours(gen, pm.Input); got != want {
					t.Errorf("%s: %s takes %s, published %s", gen, full, got, want)
				}
				if got, want := string(md.Output().FullName()), ours(gen, pm.Output); got != want {
					t.Errorf("%s: %s answers %s, published %s", gen, full, got, want)
				}
			}
		}
	}
}

// TestNoInventedFields checks the other way: every field below Folio's
// range, every method and every service is published in some generation,
// so that a typo in api/proto cannot put a field on a number no client
// knows.
func TestNoInventedFields(t *testing.T) {
	fields := map[string]bool{}
	methods := map[string]bool{}
	for _, gen := range publishedGenerations {
		p := loadPublished(t, gen)
		for name, fs := range p.Messages {
			for _, f := range fs {
				fields[ours(gen, name)+"."+f.Name] = true
				if f.Name == "db" && f.Number == 1 {
					fields[ours(gen, name)+".project"] = true
				}
			}
		}
		for svc, ms := range p.Services {
			for name := range ms {
				full := svc + "/" + name
				if r, ok := renamedMethods[full]; ok {
					full = r
				}
				methods[full] = true
			}
		}
	}
	for _, f := range laterClientFields {
		fields[f] = true
	}
	eachFile(t, func(fd protoreflect.FileDescriptor) {
		eachMessage(fd.Messages(), func(md protoreflect.MessageDescriptor) {
			if slices.Contains(folioMessages, string(md.FullName())) {
				return
			}
			for i := 0; i < md.Fields().Len(); i++ {
				f := md.Fields().Get(i)
				if f.Number() < folioFields && !fields[string(f.FullName())] {
					t.Errorf("%s (%d) is in no published generation: Folio's fields are numbered from %d", f.FullName(), f.Number(), folioFields)
				}
			}
		})
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			if slices.Contains(folioServices, string(sd.FullName())) {
				continue
			}
			for j := 0; j < sd.Methods().Len(); j++ {
				full := string(sd.FullName()) + "/" + string(sd.Methods().Get(j).Name())
				if !methods[full] {
					t.Errorf("method %s is in no published generation", full)
				}
			}
		}
	})
}

// isLeftOut reports whether a published type or service belongs to a
// package of a left-out service.
func isLeftOut(name string) bool {
	for _, svc := range leftOut {
		if pkg := svc[:strings.LastIndex(svc, ".")+1]; strings.HasPrefix(name, pkg) {
			return true
		}
	}
	return false
}

// eachFile calls fn with each of the package's .proto files.
func eachFile(t *testing.T, fn func(protoreflect.FileDescriptor)) {
	t.Helper()
	n := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(fd.Path(), "tigrisdata/v1/") {
			fn(fd)
			n++
		}
		return true
	})
	if n == 0 {
		t.Fatal("no file tigrisdata/v1/*.proto is registered")
	}
}

func eachMessage(mds protoreflect.MessageDescriptors, fn func(protoreflect.MessageDescriptor)) {
	for i := 0; i < mds.Len(); i++ {
		md := mds.Get(i)
		if !md.IsMapEntry() {
			fn(md)
		}
		eachMessage(md.Messages(), fn)
	}
}

func findMessage(t *testing.T, name string) protoreflect.MessageDescriptor {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil
	}
	md, _ := d.(protoreflect.MessageDescriptor)
	return md
}

func findEnum(t *testing.T, name string) protoreflect.EnumDescriptor {
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil
	}
	ed, _ := d.(protoreflect.EnumDescriptor)
	return ed
}

func findMethod(t *testing.T, full string) protoreflect.MethodDescriptor {
	svc, name, _ := strings.Cut(full, "/")
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(svc))
	if err != nil {
		return nil
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil
	}
	return sd.Methods().ByName(protoreflect.Name(name))
}
