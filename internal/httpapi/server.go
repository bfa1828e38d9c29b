// Package httpapi serves the Tigris v1 HTTP API: routes, request decoding,
// error mapping and stream framing. It knows HTTP and JSON; the operations
// below it know neither.
package httpapi

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/ops"
)

// Config configures the API.
type Config struct {
	// Ops runs every call.
	Ops    *ops.Ops
	Logger *slog.Logger
	// MaxBodyBytes bounds a request body. Default 16 MiB.
	MaxBodyBytes int64
	// CORSOrigins are the origins whose browser pages may call the API
	// ("*" for any). None: cross-origin calls stay off.
	CORSOrigins []string
	// Hosts are the names a request's Host may give (DNS rebinding).
	Hosts Hosts
	// HTTPS says that requests come over TLS, where r.TLS cannot tell: the
	// node splits its port by protocol after the handshake. Same-origin
	// checks need the scheme.
	HTTPS bool
	// ForwardTLS is the TLS configuration to reach other nodes that serve
	// TLS with, when forwarding a request to the node that holds its
	// transaction; nil: the system's roots.
	ForwardTLS *tls.Config
	// BodyTimeout bounds how long a request's body may take to arrive;
	// WriteTimeout how long one write of a response (or of a stream's
	// items) may wait for the client to read. Default 30s each.
	BodyTimeout, WriteTimeout time.Duration
}

// Defaults of Config.
const (
	DefaultMaxBodyBytes = 16 << 20
	DefaultBodyTimeout  = 30 * time.Second
	DefaultWriteTimeout = 30 * time.Second
)

// Server is the API's HTTP handler: a codec between HTTP and the
// operations.
type Server struct {
	cfg Config
	ops *ops.Ops
	log *slog.Logger
	mux *http.ServeMux
	// forwarder relays requests to the node that holds their transaction.
	forwarder *httputil.ReverseProxy
}

// New returns the API handler over cfg.Ops.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	s := &Server{cfg: cfg, ops: cfg.Ops, log: cfg.Logger, mux: http.NewServeMux()}
	s.forwarder = s.newForwarder(cfg.ForwardTLS)
	s.routes()
	return s
}

func (s *Server) routes() {
	const db = "/v1/databases/{db}"
	const coll = db + "/collections/{collection}"
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request) error) {
		s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if err := h(w, r); err != nil {
				s.fail(w, r, err)
			}
		})
	}
	handle("GET /v1/health", s.health)
	handle("GET /v1/info", s.info)
	handle("GET /v1/observability/info", s.info)

	handle("POST /v1/databases/list", s.listDatabases)
	handle("POST "+db+"/create", s.createDatabase)
	handle("DELETE "+db+"/drop", s.dropDatabase)
	handle("POST "+db+"/describe", s.describeDatabase)

	handle("POST "+db+"/transactions/begin", s.beginTransaction)
	handle("POST "+db+"/transactions/commit", s.commitTransaction)
	handle("POST "+db+"/transactions/rollback", s.rollbackTransaction)

	handle("POST "+db+"/collections/list", s.listCollections)
	handle("POST "+coll+"/createOrUpdate", s.createOrUpdateCollection)
	handle("DELETE "+coll+"/drop", s.dropCollection)
	handle("POST "+coll+"/describe", s.describeCollection)

	handle("POST "+coll+"/documents/insert", s.insert)
	handle("PUT "+coll+"/documents/replace", s.replace)
	handle("PUT "+coll+"/documents/update", s.update)
	handle("DELETE "+coll+"/documents/delete", s.delete)
	handle("POST "+coll+"/documents/read", s.read)
	handle("POST "+coll+"/documents/explain", s.explain)
	handle("POST "+coll+"/documents/aggregate", s.aggregate)

	handle("POST "+coll+"/events", s.events)
	handle("POST "+coll+"/messages/publish", s.publish)
	handle("POST "+coll+"/messages/subscribe", s.subscribe)
	handle("POST "+coll+"/messages/read", s.read)
	// As with read, the original served both paths with one call, on
	// either kind of collection.
	handle("POST "+coll+"/documents/search", s.search)
	handle("POST "+coll+"/messages/search", s.search)

	s.projectRoutes(handle)
	s.searchIndexRoutes(handle)
	s.tenantRoutes(handle)
	s.keyRoutes(handle)
	s.cacheRoutes(handle)

	// Calls of the API that Folio does not serve yet: 501, so that a
	// client can tell "not built" from "no such path".
	unbuilt := func(pattern, what string) {
		handle(pattern, func(http.ResponseWriter, *http.Request) error {
			return apierror.Errorf(apierror.Unimplemented, "%s is not implemented by this server yet", what)
		})
	}
	unbuilt("/v1/observability/metrics/", "metrics queries")

	handle("POST "+tokenPath, s.token)
	// Namespaces and applications moved from /v1/admin and /v1/users to
	// /v1/management in the original's last /v1/databases releases; both
	// spellings name the same calls, so clients of either era work.
	for _, nsPath := range []string{"/v1/admin/namespaces", "/v1/management/namespaces"} {
		handle("POST "+nsPath+"/{name}/create", s.createNamespace)
	}
	// /v1/admin's list has 2022's numeric ids; /v1/management's, the
	// final API's NamespaceInfo (an id string and a code).
	handle("POST /v1/admin/namespaces/list", s.listNamespaces)
	handle("POST /v1/management/namespaces/list", s.listNamespacesInfo)
	handle("GET /v1/management/namespaces", s.listNamespacesInfo)
	handle("GET /v1/management/namespaces/{id}", s.listNamespacesInfo)
	handle("DELETE /v1/management/namespaces/{id}", s.deleteNamespace)
	for _, appPath := range []string{"/v1/users/applications", "/v1/management/applications"} {
		handle("POST "+appPath+"/create", s.createApplication)
		handle("POST "+appPath+"/update", s.updateApplication)
		handle("POST "+appPath+"/list", s.listApplications)
		handle("POST "+appPath+"/rotate", s.rotateApplicationSecret)
		handle("DELETE "+appPath+"/delete", s.deleteApplication)
	}
	handle("POST /v1/management/namespaces/create", s.createNamespaceNamedInBody)
	handle("POST /v1/management/keys/rotate", s.rotateSigningKey)
	handle("POST /v1/management/backup", s.backup)

	// Whatever no pattern above matches, by path or by method, comes here
	// for the API's JSON 404 or 405 rather than the mux's plain text, so
	// that a request with a clean path is matched once (asking the mux
	// first with Handler, to tell, matched it twice: 2% of a point read's
	// CPU). The few the mux would answer itself: muxAnswersItself.
	s.mux.HandleFunc(anyRoute, s.noRoute)
}

// anyRoute is the pattern of noRoute: every path, every method, less
// specific than any other pattern.
const anyRoute = "/"

// ServeHTTP routes a request, answering unknown routes and methods with the
// API's JSON errors rather than the mux's plain text, and has its line
// written to the request log (ops.LogRequest).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ctx, id := s.ops.StartRequest(r.Context(), r.Header.Get(requestIDHeader))
	w.Header().Set(requestIDHeader, id)
	x := &exchange{sw: statusWriter{ResponseWriter: w, writeTimeout: s.cfg.WriteTimeout}}
	sw, body := &x.sw, &x.body
	sw.rc = *http.NewResponseController(sw)
	body.ReadCloser = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	r = r.WithContext(withCallerBox(ctx, &x.caller))
	r.Body = body
	r = s.serve(x, r, id)
	s.ops.LogRequest(r.Context(), ops.RequestRecord{
		Transport: "http", Caller: caller(r), Method: r.Method, Path: r.URL.Path, Status: sw.status,
		Duration: time.Since(start), BytesIn: body.n, BytesOut: sw.bytes,
		Stream: IsStream(r.URL.Path),
	})
}

// requestIDHeader names a request: a client (or a proxy in front) may send
// one, and every answer carries the one its log line has.
const requestIDHeader = "X-Request-Id"

// exchange holds the wrappers one request needs around its writer and its
// body, allocated together: they live exactly as long as the request.
type exchange struct {
	sw       statusWriter
	body     countingBody
	deadline bodyWithDeadline
	caller   callerBox
}

// serve answers a request; it returns the request as its handler saw it
// (with its caller), for the log line.
func (s *Server) serve(x *exchange, r *http.Request, requestID string) *http.Request {
	sw := &x.sw
	// The mux would redirect a path with an empty segment to its cleaned
	// form; the API answers it as an invalid name instead, as the original
	// did. A segment that cannot be a name keeps it routable.
	if strings.Contains(r.URL.Path, "//") {
		r.URL.Path = strings.ReplaceAll(r.URL.Path, "//", "/-/")
		r.URL.RawPath = ""
	}
	sw.deadline() // a deadline left by an earlier request on the connection must not apply
	if r.ContentLength != 0 {
		sw.rc.SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout))
		x.deadline = bodyWithDeadline{ReadCloser: r.Body, rc: &sw.rc}
		r.Body = &x.deadline
	}
	// Before anything else, a preflight included: a rebound page's
	// requests all name another host.
	if err := s.checkHost(r); err != nil {
		s.fail(sw, r, err)
		return r
	}
	if s.cors(sw, r) {
		return r // a preflight, answered
	}
	if err := s.checkOrigin(r); err != nil {
		s.fail(sw, r, err)
		return r
	}
	if err := checkContentType(r); err != nil {
		writeJSON(sw, http.StatusUnsupportedMediaType, errorJSON(s.public(r, err)))
		return r
	}
	if s.forward(sw, r, requestID) {
		return r
	}
	r = s.authenticate(r)
	if s.muxAnswersItself(r) {
		s.noRoute(sw, r)
		return r
	}
	s.mux.ServeHTTP(sw, r) // an unknown route or method reaches noRoute
	return r
}

// muxAnswersItself reports whether the mux would answer r before, or
// instead of, matching it to a route: a CONNECT to a host and port and
// the request target "*" match no pattern, and a path the mux would clean
// is redirected to its clean form even where that form has no route.
// Such a request gets the API's 404 or 405 instead, as every unknown route
// does; one whose clean form has a route is still redirected.
func (s *Server) muxAnswersItself(r *http.Request) bool {
	if r.URL.Path == "" || r.RequestURI == "*" {
		return true
	}
	if !strings.Contains(r.URL.Path, "/.") && !strings.Contains(r.URL.Path, "//") {
		return false // clean: the common case, matched once
	}
	_, pattern := s.mux.Handler(r)
	return pattern == "" || pattern == anyRoute
}

// IsStream reports whether a path is one of the streams (events,
// subscribe), which stay open as long as their client wants.
func IsStream(path string) bool {
	return strings.HasSuffix(path, "/events") || strings.HasSuffix(path, "/messages/subscribe")
}

// countingBody counts the bytes of a request body read, for the log line.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != anyRoute {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 {
		s.fail(w, r, apierror.Errorf(apierror.NotFound, "Not Found"))
		return
	}
	// A 405 must say which methods the resource has (RFC 9110, 15.5.6).
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	s.fail(w, r, apierror.Errorf(apierror.MethodNotAllowed, "method %s not allowed on %s", r.Method, r.URL.Path))
}

// statusWriter remembers the status and counts the bytes for the request log, passes Flush on
// for streams, and gives every write a deadline: a client that stops
// reading for longer than the write timeout is cut off, so that it holds
// neither a connection nor, through a stalled read, a transaction.
type statusWriter struct {
	http.ResponseWriter
	status       int
	bytes        int64                   // written, for the log line
	rc           http.ResponseController // of this statusWriter
	writeTimeout time.Duration
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) deadline() {
	w.rc.SetWriteDeadline(time.Now().Add(w.writeTimeout))
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.deadline()
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush lifts the write deadline once the flush has gone out: over
// HTTP/2 a stream's write deadline resets the stream when it passes, even
// with no write waiting, and a stream (events, subscribe) may rightly stay
// idle for longer than the timeout. The next write sets it again.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		w.deadline()
		f.Flush()
		w.rc.SetWriteDeadline(time.Time{})
	}
}

// bodyWithDeadline reads a request body that must arrive within the body
// timeout. The read deadline is lifted once the whole body has been read:
// the server then watches the connection for the client going away, and a
// deadline passing there would cancel the request. A body cut off keeps
// its (passed) deadline, so that the server, which would otherwise read
// the rest of the body before answering, gives up at once and closes the
// connection after the answer.
type bodyWithDeadline struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *bodyWithDeadline) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// fail answers a request with the API error for err.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := s.public(r, err)
	switch e.Code {
	case apierror.Unauthenticated:
		w.Header().Set("WWW-Authenticate", `Bearer realm="folio"`)
	case apierror.ResourceExhausted, apierror.Unavailable:
		if e.RetryDelay > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryDelay.Seconds()))))
		}
	}
	writeJSON(w, statusOf(e), errorJSON(e))
}

// public returns the error a client may see for err (see ops.Public).
func (s *Server) public(r *http.Request, err error) *apierror.Error {
	return s.ops.Public(r.Context(), err, "method", r.Method, "path", r.URL.Path)
}

// publicFor is public bound to a request, for streams.
func (s *Server) publicFor(r *http.Request) func(error) *apierror.Error {
	return func(err error) *apierror.Error { return s.public(r, err) }
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	// No HTML escaping: schemas and keys go back as the client wrote them.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":{"code":"INTERNAL","message":"cannot encode response"}}`)
	}
	b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	if err := s.ops.Health(r.Context(), caller(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"response": "OK"})
	return nil
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) error {
	info, err := s.ops.Info(r.Context(), caller(r))
	if err != nil {
		return err
	}
	// engine and auth are Folio's members, beside the original's one.
	writeJSON(w, http.StatusOK, struct {
		ServerVersion string `json:"server_version"`
		Engine        string `json:"engine,omitempty"`
		Auth          bool   `json:"auth"`
	}{info.ServerVersion, info.Engine, info.Auth})
	return nil
}
