// Command dumpdescriptors writes, as JSON, every message's fields, every
// enum's values and every service's methods of the published generated
// code of tigris-client-go's api/server/v1 at the version this module
// requires: the testdata that compat_test.go checks Folio's definitions
// against. It is a module of its own, as each published version must be
// the only one of its module path in a build (go.mod also pins
// google.golang.org/genproto to a version after googleapis/api split off,
// which the old grpc-gateway otherwise finds twice):
//
//	cd internal/wire/tigrisv1/testdata/dumpdescriptors
//	go get github.com/tigrisdata/tigris-client-go@v1.0.0
//	go run . > ../published-v1.0.0.json
//	go get github.com/tigrisdata/tigris-client-go@v1.0.0-alpha.32
//	go run . > ../published-alpha.32.json
package main

import (
	"encoding/json"
	"os"
	"runtime/debug"
	"strings"

	_ "github.com/tigrisdata/tigris-client-go/api/server/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

type field struct {
	Name        string `json:"name"`
	Number      int    `json:"number"`
	Kind        string `json:"kind"`
	Cardinality string `json:"cardinality"`
	// Type is a message's or enum's full name; for a map, its key's kind
	// and its value's kind or full name, comma-separated.
	Type string `json:"type,omitempty"`
	Map  bool   `json:"map,omitempty"`
}

type method struct {
	Input           string `json:"input"`
	Output          string `json:"output"`
	ClientStreaming bool   `json:"client_streaming,omitempty"`
	ServerStreaming bool   `json:"server_streaming,omitempty"`
}

type dump struct {
	Source   string                       `json:"source"`
	Messages map[string][]field           `json:"messages"`
	Enums    map[string]map[string]int    `json:"enums"`
	Services map[string]map[string]method `json:"services"`
}

func main() {
	d := dump{Messages: map[string][]field{}, Enums: map[string]map[string]int{}, Services: map[string]map[string]method{}}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/tigrisdata/tigris-client-go" {
				d.Source = dep.Path + "@" + dep.Version + " api/server/v1"
			}
		}
	}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(fd.Path(), "server/v1/") {
			return true
		}
		d.addTypes(fd.Messages(), fd.Enums())
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			ms := map[string]method{}
			for j := 0; j < sd.Methods().Len(); j++ {
				md := sd.Methods().Get(j)
				ms[string(md.Name())] = method{string(md.Input().FullName()), string(md.Output().FullName()), md.IsStreamingClient(), md.IsStreamingServer()}
			}
			d.Services[string(sd.FullName())] = ms
		}
		return true
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		panic(err)
	}
}

func (d *dump) addTypes(msgs protoreflect.MessageDescriptors, enums protoreflect.EnumDescriptors) {
	for i := 0; i < enums.Len(); i++ {
		ed := enums.Get(i)
		vs := map[string]int{}
		for j := 0; j < ed.Values().Len(); j++ {
			vs[string(ed.Values().Get(j).Name())] = int(ed.Values().Get(j).Number())
		}
		d.Enums[string(ed.FullName())] = vs
	}
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		if md.IsMapEntry() {
			continue
		}
		fs := []field{}
		for j := 0; j < md.Fields().Len(); j++ {
			fs = append(fs, describe(md.Fields().Get(j)))
		}
		d.Messages[string(md.FullName())] = fs
		d.addTypes(md.Messages(), md.Enums())
	}
}

func describe(f protoreflect.FieldDescriptor) field {
	fl := field{Name: string(f.Name()), Number: int(f.Number()), Kind: f.Kind().String(), Cardinality: f.Cardinality().String()}
	switch {
	case f.IsMap():
		fl.Map = true
		fl.Type = f.MapKey().Kind().String() + "," + typeName(f.MapValue())
	default:
		fl.Type = typeName(f)
		if fl.Type == f.Kind().String() {
			fl.Type = ""
		}
	}
	return fl
}

func typeName(f protoreflect.FieldDescriptor) string {
	switch {
	case f.Message() != nil:
		return string(f.Message().FullName())
	case f.Enum() != nil:
		return string(f.Enum().FullName())
	}
	return f.Kind().String()
}
