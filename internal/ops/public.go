package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"

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
		return e
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
		msg = e.Message
	}
	return &status.Error{Code: e.Code, Message: msg + "; the server's log has the details under request id " + id, RetryDelay: e.RetryDelay}
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
