package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/reqinfo"
	"github.com/foliodb/folio/internal/status"
)

// Public returns the error a client may see for err, whichever transport
// answers it: every transport must say the same thing for the same
// failure. An error that is the server's fault (one with a cause) says only
// that, with an id under which the log has the whole story: its text can
// hold keys, Go errors, host names and user names, which are nobody else's
// business. attrs say which request failed, in the transport's terms (a
// method and a path, or a gRPC method), for the log line.
func (o *Ops) Public(ctx context.Context, err error, attrs ...any) *status.Error {
	e := AsStatus(err)
	info := reqinfo.From(ctx)
	info.NoteCode(e.Code)
	if e.Cause == nil {
		return bounded(e)
	}
	id := requestID()
	if info != nil {
		id = info.ID
	}
	level := slog.LevelError
	if e.Code != status.Internal {
		level = slog.LevelWarn // the store unreachable or busy: not a bug, and loud under overload
	}
	o.log.Log(ctx, level, "request failed", append(append([]any{"request_id", id}, attrs...), "code", e.Code, "err", e.Cause)...)
	msg := "internal error"
	if e.Code != status.Internal {
		msg = bounded(e).Message
	}
	return &status.Error{Code: e.Code, Message: msg + "; the server's log has the details under request id " + id, RetryDelay: e.RetryDelay}
}

// Bounds of an error's message: messages echo the request (a field name,
// a value), which may be as long as the body. A longer message keeps its
// start and its end, which say what was wrong, around an ellipsis.
const (
	maxMessageBytes  = 512
	keptMessageStart = 300
	keptMessageEnd   = 200
)

// bounded returns e with its message cut to maxMessageBytes, or e itself
// if it fits (errors can be shared values: e is not changed).
func bounded(e *status.Error) *status.Error {
	m := e.Message
	if len(m) <= maxMessageBytes {
		return e
	}
	start, end := keptMessageStart, len(m)-keptMessageEnd
	// Cut between characters, not inside one.
	for start > 0 && !utf8.RuneStart(m[start]) {
		start--
	}
	for end < len(m) && !utf8.RuneStart(m[end]) {
		end++
	}
	cut := *e
	cut.Message = m[:start] + "…" + m[end:]
	return &cut
}

// AsStatus returns the API error err carries. The operations give every
// error they return a code; one without (which would be a bug) is answered
// as INTERNAL.
func AsStatus(err error) *status.Error {
	if se, ok := status.From(err); ok {
		return se
	}
	return &status.Error{Code: status.Internal, Message: err.Error(), Cause: err}
}

// requestID names a failed request in the log and in its answer.
func requestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
