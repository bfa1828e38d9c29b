package ops

import (
	"context"
	"log/slog"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/reqinfo"
)

// The request log: one line per request, written here for both transports
// so that they log alike. A transport starts a request (StartRequest) and
// reports its end (LogRequest); in between, Public notes the API code the
// request was answered with and the document layer the plans it ran.

// RequestRecord is what a transport reports of a request that has ended.
type RequestRecord struct {
	Transport string // "http" or "grpc"
	Caller    Caller
	// Method and Path are an HTTP request's; a gRPC call has its full
	// method in Method and no Path.
	Method, Path string
	// Status is the HTTP status sent (0 over gRPC: the line has the API
	// code, which both transports share).
	Status   int
	Duration time.Duration
	// BytesIn and BytesOut are the request body's and the response's
	// bytes (HTTP only).
	BytesIn, BytesOut int64
	// Stream marks the events and subscribe streams, long by design: they
	// are never logged as slow.
	Stream bool
}

// maxClientRequestID bounds the request id a client may choose.
const maxClientRequestID = 64

// StartRequest returns ctx carrying a new request's notes, and the
// request's id: clientID (the X-Request-Id a client or a proxy in front
// sent) if it is short and plain, so that one id follows the request
// through every log; a new one otherwise.
func (o *Ops) StartRequest(ctx context.Context, clientID string) (context.Context, string) {
	id := clientID
	if !plainID(id) {
		id = requestID()
	}
	return reqinfo.With(ctx, &reqinfo.Info{ID: id}), id
}

// RequestID is the id of the request ctx belongs to ("" outside one).
func RequestID(ctx context.Context) string {
	if info := reqinfo.From(ctx); info != nil {
		return info.ID
	}
	return ""
}

// NoteFailure records the API code a transport answered a request with,
// for a failure that did not pass through Public (the transport's own, as
// a gRPC message that does not decode); a code noted before stands.
func (o *Ops) NoteFailure(ctx context.Context, c apierror.Code) {
	reqinfo.From(ctx).NoteCode(c)
}

// plainID reports whether a client's request id may go into logs and
// headers as is: 1 to 64 letters, digits, '-', '_', '.' or ':'.
func plainID(id string) bool {
	if id == "" || len(id) > maxClientRequestID {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// LogRequest writes the line of a request that has ended, ctx being the
// one StartRequest returned (or one derived from it): at error level when
// the server failed it (the API codes answered 5xx), at warn level when it
// took longer than Config.SlowRequest (with the query plans it ran), at
// info level when the client's request failed (4xx) or when
// Config.LogRequests asks for every request, at debug level otherwise. It
// is no call of the API (the request it logs is one, and its caller is in
// the record), so the request metrics do not count it.
func (o *Ops) LogRequest(ctx context.Context, r RequestRecord) {
	info := reqinfo.From(ctx)
	code := info.Code()
	slow := o.cfg.SlowRequest > 0 && r.Duration >= o.cfg.SlowRequest && !r.Stream
	var level slog.Level
	switch {
	case r.Stream && code == apierror.Unavailable:
		// A stream ended so that its client resumes elsewhere or later
		// (the server shutting down): routine, not a failure to look into.
		level = slog.LevelInfo
	case code != "" && serverFault(code):
		level = slog.LevelError
	case slow:
		level = slog.LevelWarn
	case code != "" || o.cfg.LogRequests:
		level = slog.LevelInfo
	default:
		level = slog.LevelDebug
	}
	if !o.log.Enabled(ctx, level) {
		return
	}
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs, slog.String("transport", r.Transport), slog.String("method", r.Method))
	if r.Path != "" {
		attrs = append(attrs, slog.String("path", r.Path))
	}
	if r.Status != 0 {
		attrs = append(attrs, slog.Int("status", r.Status))
	}
	if code != "" {
		attrs = append(attrs, slog.String("code", string(code)))
	}
	attrs = append(attrs, slog.Duration("duration", r.Duration))
	if r.Transport == "http" {
		attrs = append(attrs, slog.Int64("bytes_in", r.BytesIn), slog.Int64("bytes_out", r.BytesOut))
	}
	if who := r.Caller.String(); who != "" {
		attrs = append(attrs, slog.String("caller", who))
	}
	if info != nil {
		attrs = append(attrs, slog.String("request_id", info.ID))
	}
	if slow {
		plans, more := info.Plans()
		if more > 0 {
			plans = append(plans, "and more")
		}
		attrs = append(attrs, slog.Bool("slow", true), slog.Any("plans", plans))
	}
	o.log.LogAttrs(ctx, level, "request", attrs...)
}

// serverFault reports whether an API code says the server, not the
// request, failed: the codes answered with a 5xx status.
func serverFault(c apierror.Code) bool {
	switch c {
	case apierror.Unknown, apierror.Internal, apierror.DataLoss, apierror.Unavailable, apierror.BadGateway, apierror.DeadlineExceeded, apierror.Unimplemented:
		return true
	}
	return false
}

// String names the caller in logs, "namespace/application"; "" for an
// anonymous caller.
func (c Caller) String() string {
	if c.App == "" {
		return ""
	}
	ns := c.Namespace.Name
	if ns == "" {
		ns = auth.DefaultNamespaceName
	}
	return ns + "/" + c.App
}
