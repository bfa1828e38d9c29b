package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// fieldProto is a field of a test message: name, number, type, label,
// and the message it holds (".pkg.Name") for a message field.
func fieldProto(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, repeated bool, typeName string) *descriptorpb.FieldDescriptorProto {
	label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	if repeated {
		label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	}
	f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(),
		JsonName: proto.String(name)}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

const (
	tString  = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes   = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tInt64   = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tFloat   = descriptorpb.FieldDescriptorProto_TYPE_FLOAT
	tSint64  = descriptorpb.FieldDescriptorProto_TYPE_SINT64
	tMessage = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
)

// message is the descriptor of a message M of package pkg with fields,
// and nested messages (map entries).
func message(t *testing.T, pkg string, fields []*descriptorpb.FieldDescriptorProto, nested ...*descriptorpb.DescriptorProto) protoreflect.MessageDescriptor {
	t.Helper()
	ts := protodesc.ToFileDescriptorProto(timestamppb.File_google_protobuf_timestamp_proto)
	file := &descriptorpb.FileDescriptorProto{
		Name: proto.String("test.proto"), Package: proto.String(pkg), Syntax: proto.String("proto3"),
		Dependency:  []string{ts.GetName()},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"), Field: fields, NestedType: nested}},
	}
	files, err := protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{ts, file}})
	if err != nil {
		t.Fatal(err)
	}
	d, err := files.FindDescriptorByName(protoreflect.FullName(pkg + ".M"))
	if err != nil {
		t.Fatal(err)
	}
	return d.(protoreflect.MessageDescriptor)
}

// mapEntry is the nested entry message of a map field of M.
func mapEntry(name string, key, value *descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
	return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: []*descriptorpb.FieldDescriptorProto{key, value},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)}}
}

func newGenerator() *generator {
	return &generator{files: new(protoregistry.Files), shapes: map[protoreflect.FullName]*shapeDecl{}, byVar: map[string]protoreflect.FullName{},
		bytesNamesUsed: map[string]bool{}, jsonNamesUsed: map[string]bool{}}
}

// The rules that turn a field into its shape: names (2022's db, the
// input's renames), kinds (JSON or opaque bytes, timestamps, maps), and
// what the client's codec cannot carry.
func TestFieldShapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pkg     string
		fields  []*descriptorpb.FieldDescriptorProto
		nested  []*descriptorpb.DescriptorProto
		want    []string // the fields' expressions
		wantErr string
	}{
		{name: "2023's project at 1 is 2022's db", pkg: "tigrisdata.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("project", 1, tString, false, ""), fieldProto("collection", 2, tString, false, "")},
			want:   []string{`str(1, "db")`, `str(2, "collection")`}},
		{name: "project elsewhere keeps its name", pkg: "tigrisdata.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("name", 1, tString, false, ""), fieldProto("project", 2, tString, false, "")},
			want:   []string{`str(1, "name")`, `str(2, "project")`}},
		{name: "project at 1 outside the document API keeps its name", pkg: "tigrisdata.user.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("project", 1, tString, false, "")},
			want:   []string{`str(1, "project")`}},
		{name: "two fields of one JSON name", pkg: "tigrisdata.v1",
			fields:  []*descriptorpb.FieldDescriptorProto{fieldProto("project", 1, tString, false, ""), fieldProto("db", 2, tString, false, "")},
			wantErr: `both "db"`},
		{name: "bytes holding JSON, repeated, and opaque bytes", pkg: "tigrisdata.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("filter", 1, tBytes, false, ""), fieldProto("documents", 2, tBytes, true, ""),
				fieldProto("resume_token", 3, tBytes, false, "")},
			want: []string{`raw(1, "filter")`, `rep(raw(2, "documents"))`, `bin(3, "resume_token")`}},
		{name: "bytes of no known meaning", pkg: "tigrisdata.v1",
			fields:  []*descriptorpb.FieldDescriptorProto{fieldProto("blob", 1, tBytes, false, "")},
			wantErr: "say in shapegen's bytesHoldJSON"},
		{name: "bytes outside the API are protobuf's base64", pkg: "google.rpc",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("blob", 1, tBytes, false, "")},
			want:   []string{`bin(1, "blob")`}},
		{name: "a timestamp", pkg: "tigrisdata.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("created_at", 1, tMessage, false, ".google.protobuf.Timestamp"), fieldProto("n", 2, tInt64, true, "")},
			want:   []string{`stamp(1, "created_at")`, `rep(integer(2, "n"))`}},
		{name: "a map of string to message", pkg: "tigrisdata.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("facets", 1, tMessage, true, ".tigrisdata.v1.M.FacetsEntry")},
			nested: []*descriptorpb.DescriptorProto{mapEntry("FacetsEntry", fieldProto("key", 1, tString, false, ""),
				fieldProto("value", 2, tMessage, false, ".tigrisdata.v1.M.Facet")),
				{Name: proto.String("Facet"), Field: []*descriptorpb.FieldDescriptorProto{fieldProto("count", 1, tInt64, false, "")}}},
			want: []string{`mapOf(1, "facets", shapeMFacetsEntry)`}},
		{name: "a message that holds itself", pkg: "tigrisdata.v1",
			fields:  []*descriptorpb.FieldDescriptorProto{fieldProto("next", 1, tMessage, false, ".tigrisdata.v1.M")},
			wantErr: "holds itself"},
		{name: "a map of string to string", pkg: "tigrisdata.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("labels", 1, tMessage, true, ".tigrisdata.v1.M.LabelsEntry")},
			nested: []*descriptorpb.DescriptorProto{mapEntry("LabelsEntry", fieldProto("key", 1, tString, false, ""),
				fieldProto("value", 2, tString, false, ""))},
			want: []string{`mapOf(1, "labels", shapeMLabelsEntry)`}},
		{name: "a map keyed by numbers", pkg: "tigrisdata.v1",
			fields: []*descriptorpb.FieldDescriptorProto{fieldProto("byID", 1, tMessage, true, ".tigrisdata.v1.M.ByIDEntry")},
			nested: []*descriptorpb.DescriptorProto{mapEntry("ByIDEntry", fieldProto("key", 1, tInt64, false, ""),
				fieldProto("value", 2, tString, false, ""))},
			wantErr: "JSON names an object's members with strings"},
		{name: "a float", pkg: "tigrisdata.v1",
			fields:  []*descriptorpb.FieldDescriptorProto{fieldProto("score", 1, tFloat, false, "")},
			wantErr: "a float, which the client's codec"},
		{name: "a zigzag integer", pkg: "tigrisdata.v1",
			fields:  []*descriptorpb.FieldDescriptorProto{fieldProto("delta", 1, tSint64, false, "")},
			wantErr: "a sint64, which the client's codec"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := message(t, tc.pkg, tc.fields, tc.nested...)
			g := newGenerator()
			v, err := g.shape(md)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v != "shapeM" {
				t.Errorf("variable %s, want shapeM", v)
			}
			got := g.shapes[md.FullName()].fields
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("fields\n%s\nwant\n%s", strings.Join(got, "; "), strings.Join(tc.want, "; "))
			}
		})
	}
}

// The input's renames apply to the fields they name: HTTP's keys of a
// publish are the resume tokens, and the published keys are left out.
func TestJSONNamesRenameAndLeaveOut(t *testing.T) {
	md := message(t, "tigrisdata.v1", []*descriptorpb.FieldDescriptorProto{
		fieldProto("status", 2, tString, false, ""), fieldProto("keys", 3, tBytes, true, ""), fieldProto("resume_tokens", 1001, tBytes, true, "")})
	// The rename is keyed by the message's full name: test it on a
	// message of that name.
	saved := jsonNames
	t.Cleanup(func() { jsonNames = saved })
	jsonNames = map[string]string{"tigrisdata.v1.M.resume_tokens": "keys", "tigrisdata.v1.M.keys": ""}
	g := newGenerator()
	if _, err := g.shape(md); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(g.shapes[md.FullName()].fields, "; ")
	if want := `str(2, "status"); rep(bin(1001, "keys"))`; got != want {
		t.Errorf("fields %s, want %s", got, want)
	}
}

// An entry of the input that names no field the client uses stops the
// generator: the field was renamed or removed, and the rule with it.
func TestInputNamingNoFieldFails(t *testing.T) {
	saved := jsonNames
	t.Cleanup(func() { jsonNames = saved })
	jsonNames = map[string]string{"tigrisdata.v1.Gone.field": "x"}
	if _, err := generate(protoregistry.GlobalFiles); err == nil || !strings.Contains(err.Error(), "tigrisdata.v1.Gone.field") {
		t.Fatalf("error %v, want one naming the stale entry", err)
	}
}

// A call the definitions lack, or that streams requests, stops the
// generator.
func TestUnknownCallsFail(t *testing.T) {
	for _, tc := range []struct {
		call    call
		wantErr string
	}{
		{call{method: "/tigrisdata.v1.Tigris/NoSuchMethod"}, "has no method NoSuchMethod"},
		{call{method: "/tigrisdata.v1.NoSuchService/Read"}, "service tigrisdata.v1.NoSuchService"},
		{call{method: "Read"}, "not a full method name"},
		{call{method: "/tigrisdata.v1.Tigris/DescribeDatabase", answer: "tigrisdata.v1.NoSuchMessage"}, "tigrisdata.v1.NoSuchMessage"},
	} {
		g := newGenerator()
		g.files = protoregistry.GlobalFiles
		if _, err := g.method(tc.call); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%v: error %v, want one saying %q", tc.call, err, tc.wantErr)
		}
	}
}
