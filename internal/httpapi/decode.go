package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/jsonscan"
	"github.com/foliodb/folio/internal/suggest"
)

// bodyBuffers keep request body buffers from one request to the next.
// decode's callers may keep nothing of the body: json.Unmarshal copies
// what it stores (a json.RawMessage too).
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody: a buffer grown past this by a large body (an insert of
// many documents) is left to the garbage collector rather than kept.
const maxPooledBody = 64 << 10

// decode reads the request's JSON body into v. An empty body leaves v as it
// is: every body field is optional at this level. A member given twice in
// the request's envelope (its top level or its options) is refused rather
// than resolved by a rule the client may not expect; documents, filters
// and schemas inside it are checked for duplicates where they are parsed.
// A member of the body's options object that known does not list is
// refused too: a mistyped option ("limt") would otherwise change nothing,
// silently.
func decode(r *http.Request, v any, known options) error { return decodeFast(r, v, known, nil) }

// decodeFast is decode with a fast path: fast, if not nil, decodes a body
// it recognizes into v without reflection and reports true, or leaves v
// alone and reports false for encoding/json to decode the body (and word
// its errors). It must copy what it keeps, as json.Unmarshal does, and
// take no body with options.
func decodeFast(r *http.Request, v any, known options, fast func(body []byte) bool) error {
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	_, err := buf.ReadFrom(r.Body)
	body := buf.Bytes()
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return apierror.Errorf(apierror.InvalidArgument, "request body larger than %d bytes", tooBig.Limit)
		}
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			return errSlowBody()
		}
		return apierror.Errorf(apierror.InvalidArgument, "reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if fast != nil && fast(body) {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return apierror.Errorf(apierror.InvalidArgument, "malformed JSON request: %s", decodeError(err))
	}
	return checkEnvelope(body, known)
}

// options are the members a request's options object may have, or nil for
// a request that the published API gives no options: its body's options
// member, if any, is not looked into, as other members the request does
// not have are not.
type options []string

// The options of the requests: the fields of each one's published options
// message (api/proto/tigrisdata/v1/api.proto), by the names the official
// clients send over HTTP, and the few Folio reads beside them.
// TestOptionsAreThePublishedOnes holds them to the messages.
var (
	// DatabaseOptions, CollectionOptions and TransactionOptions have no
	// fields.
	noOptions = options{}
	// InsertRequestOptions, ReplaceRequestOptions, ImportRequestOptions.
	writeOnlyOptions = options{"write_options"}
	// UpdateRequestOptions, DeleteRequestOptions.
	filterWriteOptions = options{"write_options", "collation", "limit"}
	readOptions        = options{"limit", "skip", "offset", "collation"}
	eventsOptions      = options{"start_after", "collation"}
	publishOptions     = options{"partition"}
	subscribeOptions   = options{"partitions", "start_after", "collation"}
	// CountRequest has none published; Folio takes a collation where read
	// takes it.
	countOptions = options{"collation"}
	// Aggregate is Folio's own call: its options are count's.
	aggregateOptions = options{"collation"}
)

// unknownOption is the error for a member of a request's options object
// that the request does not have, naming the close one if there is one.
func unknownOption(name string, known options) error {
	if hint := suggest.Hint(name, known); hint != "" {
		return apierror.Errorf(apierror.InvalidArgument, "unknown option '%s'%s", name, hint)
	}
	if len(known) == 0 {
		return apierror.Errorf(apierror.InvalidArgument, "unknown option '%s': this request takes no options", name)
	}
	return apierror.Errorf(apierror.InvalidArgument, "unknown option '%s': this request's options are %s", name, strings.Join(known, ", "))
}

// decodeError says what is wrong with a body in the API's terms, not in
// Go's (encoding/json names Go types and struct fields).
func decodeError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	var b64Err base64.CorruptInputError
	switch {
	case errors.As(err, &typeErr):
		field := strings.TrimPrefix(typeErr.Field, ".")
		if field == "" {
			return fmt.Sprintf("the request must be a JSON object, not %s", article(typeErr.Value))
		}
		return fmt.Sprintf("'%s' must be %s, not %s", field, apiType(typeErr.Type), article(typeErr.Value))
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("%s (at byte %d)", syntaxErr.Error(), syntaxErr.Offset)
	case errors.As(err, &b64Err):
		return "a bytes value (such as options.offset) is not valid base64"
	}
	return err.Error()
}

// apiType names a Go type of a request's field as JSON does.
func apiType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "a base64 string"
		}
		return "an array"
	}
	return "an object"
}

// article puts "a" or "an" before a JSON type's name.
func article(jsonType string) string {
	switch jsonType {
	case "array", "object":
		return "an " + jsonType
	case "bool":
		return "a boolean"
	}
	return "a " + jsonType
}

// checkEnvelope refuses a member named twice in the body's top-level
// object or in its options object, and a member of its options object
// that known does not list (unless known is nil).
func checkEnvelope(body []byte, known options) error {
	start, _, err := jsonscan.Whole(body)
	if err != nil || jsonscan.KindAt(body, start) != jsonscan.Object {
		return nil // json.Unmarshal has accepted it: not an object, nothing to check
	}
	return checkMembers(body, start, "", true, known)
}

// checkMembers checks the members of the object at body[at]: the body's
// (descend set, where "") or its options' (where "options.").
func checkMembers(body []byte, at int, where string, descend bool, known options) error {
	obj, err := jsonscan.ObjectAt(body, at)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	for {
		key, escaped, value, ok, err := obj.Next()
		if err != nil || !ok {
			return nil
		}
		name := string(key)
		if escaped {
			name = jsonscan.Unquote(key)
		}
		if seen[name] {
			return apierror.Errorf(apierror.InvalidArgument, "member '%s%s' is given twice in the request", where, name)
		}
		seen[name] = true
		if !descend && known != nil && !slices.Contains(known, name) {
			return unknownOption(name, known)
		}
		if descend && name == "options" && jsonscan.KindAt(body, value) == jsonscan.Object {
			if err := checkMembers(body, value, "options.", false, known); err != nil {
				return err
			}
		}
		if err := obj.Skip(); err != nil {
			return nil
		}
	}
}

// int64Option is an integer option that clients may send as a JSON number
// or, as proto3's JSON mapping writes 64-bit integers, as a string of one.
type int64Option int64

func (n *int64Option) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errors.New("an integer option given as a string must hold an integer, not " + strconv.Quote(s))
		}
		*n = int64Option(v)
		return nil
	}
	var v int64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*n = int64Option(v)
	return nil
}

// rawMembers is a fast path for decodeFast: a body that is an object of
// only the members named in names (spelled exactly, each at most once, none
// null) whose values are valid JSON, which encoding/json would store as
// they are written in json.RawMessage fields. It copies each value into
// its field and reports true; for any other body it stores nothing and
// reports false. The names are few, so they are a slice, not a map.
func rawMembers(body []byte, names []string, fields []*json.RawMessage) bool {
	start, _, err := jsonscan.Whole(body)
	if err != nil {
		return false
	}
	obj, err := jsonscan.ObjectAt(body, start)
	if err != nil {
		return false
	}
	var found [4][2]int // each name's value: start and end offsets
	if len(names) > len(found) {
		return false
	}
	for {
		key, escaped, value, ok, err := obj.Next()
		if err != nil {
			return false
		}
		if !ok {
			break
		}
		n := -1
		for i, name := range names {
			if string(key) == name { // compared without a copy of key
				n = i
				break
			}
		}
		if escaped || n < 0 || found[n][1] > 0 || body[value] == 'n' {
			return false // escaped, unknown, repeated or null: encoding/json decides
		}
		end, err := jsonscan.End(body, value)
		if err != nil {
			return false
		}
		found[n] = [2]int{value, end}
		obj.Resume(end)
	}
	for i, f := range found[:len(names)] {
		if f[1] > 0 {
			*fields[i] = append(json.RawMessage(nil), body[f[0]:f[1]]...)
		}
	}
	return true
}
