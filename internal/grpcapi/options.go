package grpcapi

import (
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/foliodb/folio/internal/apierror"
)

// unknownOptions is the error for a request's options message that holds a
// field this server does not know, nil if it holds none. Protobuf keeps such
// a field aside rather than failing, so a mistyped or newer option would
// otherwise change nothing, silently, as HTTP's decode refuses to let it
// (httpapi names the member; over gRPC a field has only its number). The
// published clients send no field these messages lack.
func unknownOptions(opts proto.Message) error {
	m := opts.ProtoReflect()
	if !m.IsValid() {
		return nil // no options
	}
	b := m.GetUnknown()
	if len(b) == 0 {
		return nil
	}
	num, _, n := protowire.ConsumeTag(b)
	if n < 0 {
		return apierror.Errorf(apierror.InvalidArgument, "malformed request options")
	}
	fields := m.Descriptor().Fields()
	known := make([]string, fields.Len())
	for i := range known {
		known[i] = string(fields.Get(i).Name())
	}
	return apierror.Errorf(apierror.InvalidArgument, "unknown option: field number %d of %s; this request's options are %s",
		num, m.Descriptor().Name(), strings.Join(known, ", "))
}
