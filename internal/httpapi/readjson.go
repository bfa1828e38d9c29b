package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/ops"
)

// A read on a 2023 route whose Accept header is exactly application/json
// is answered as one JSON object rather than a stream, as the final server
// did for clients that cannot read a stream (it compared the header's
// value whole, so "application/json, */*" still streams):
//
//	{"result":{"data":[{...,"_tigris_created_at":"…","_tigris_updated_at":"…"}, …]}}
//
// each document with its times inline, under the names of the original's
// metadata fields (_tigris_updated_at only once it was updated). The 2022
// server always streamed, and so do the 2022 routes.

// defaultJSONReadLimit is the most documents such a read without a limit
// returns: the original's.
const defaultJSONReadLimit = 256

// acceptsOneObject reports whether a read asks for the one-object answer.
func acceptsOneObject(r *http.Request) bool {
	return isProjectRoute(r) && r.Header.Get("Accept") == "application/json"
}

// readOneObject answers a read as one object. The answer is built whole
// before it is sent, so it is bounded like a request body (MaxBodyBytes):
// a read whose documents would pass that is refused with 400, naming the
// two ways out, and nothing else is sent.
func (s *Server) readOneObject(w http.ResponseWriter, r *http.Request, req ops.ReadRequest) error {
	if req.Limit == 0 {
		req.Limit = defaultJSONReadLimit
	}
	const head, tail = `{"result":{"data":[`, `]}}`
	b := []byte(head)
	err := s.ops.Read(r.Context(), caller(r), req, func(item ops.Item) error {
		if len(b) > len(head) {
			b = append(b, ',')
		}
		b = appendDocumentWithTimes(b, item)
		if int64(len(b)+len(tail)) > s.cfg.MaxBodyBytes {
			return apierror.Errorf(apierror.InvalidArgument, "the documents read exceed %d bytes, the most an answer to 'Accept: application/json' holds: "+
				"ask for fewer (options.limit) or read them as a stream (without that header)", s.cfg.MaxBodyBytes)
		}
		return nil
	})
	if err != nil {
		return err
	}
	b = append(b, tail...)
	w.Header().Set("Content-Type", "application/json")
	// One body of a known length, not a stream's chunks.
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

// appendDocumentWithTimes appends a read item's document with its times
// added as its last members.
func appendDocumentWithTimes(b []byte, item ops.Item) []byte {
	start := len(b)
	b = appendDocument(b, item.Data)
	end := len(b) - 1
	for end > start && isSpace(b[end]) { // as the client wrote it
		end--
	}
	if end <= start || b[end] != '}' { // not an object: nothing to add to
		return b
	}
	b = b[:end]
	if !noMembers(b[start:]) {
		b = append(b, ',')
	}
	b = appendTime(b, "_tigris_created_at", item.CreatedAt)
	if !item.UpdatedAt.IsZero() {
		b = appendTime(append(b, ','), "_tigris_updated_at", item.UpdatedAt)
	}
	return append(b, '}')
}

// noMembers reports whether an object's text, without its closing brace,
// has no member.
func noMembers(open []byte) bool {
	for _, c := range open[1:] {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func appendTime(b []byte, name string, t time.Time) []byte {
	b = append(append(append(b, '"'), name...), `":"`...)
	b = t.UTC().AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
