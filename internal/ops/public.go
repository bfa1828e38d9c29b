package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/reqinfo"
)

// Public returns the error a client may see for err, whichever transport
// answers it: every transport must say the same thing for the same
// failure. An error that is the server's fault (one with a cause) says only
// that, with an id under which the log has the whole story: its text can
// hold keys, Go errors, host names and user names, which are nobody else's
// business. attrs say which request failed, in the transport's terms (a
// method and a path, or a gRPC method), for the log line.
func (o *Ops) Public(ctx context.Context, err error, attrs ...any) *apierror.Error {
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
	if e.Code != apierror.Internal {
		level = slog.LevelWarn // the store unreachable or busy: not a bug, and loud under overload
	}
	o.log.Log(ctx, level, "request failed", append(append([]any{"request_id", id}, attrs...), "code", e.Code, "err", e.Cause)...)
	msg := "internal error"
	if e.Code != apierror.Internal {
		msg = bounded(e).Message
	}
	return &apierror.Error{Code: e.Code, Message: msg + "; the server's log has the details under request id " + id, RetryDelay: e.RetryDelay}
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
func bounded(e *apierror.Error) *apierror.Error {
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
func AsStatus(err error) *apierror.Error {
	if se, ok := apierror.From(err); ok {
		return se
	}
	return &apierror.Error{Code: apierror.Internal, Message: err.Error(), Cause: err}
}

// requestID names a failed request in the log and in its answer.
func requestID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
