// Package httpapi serves the Tigris v1 HTTP API: routes, request decoding,
// error mapping and stream framing. It knows HTTP and JSON; the operations
// below it know neither.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/docs"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/messages"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/internal/status"
	"github.com/foliodb/folio/internal/streams"
)

// Config configures the API.
type Config struct {
	Store  kv.Store
	Logger *slog.Logger
	// Version is reported by the info endpoints.
	Version string
	// MaxBodyBytes bounds a request body. Default 16 MiB.
	MaxBodyBytes int64
	// MaxDocumentsPerRequest bounds the documents of one insert or
	// replace. Default 10,000.
	MaxDocumentsPerRequest int
	// Sessions configures interactive transactions (origin, idle timeout,
	// maximum lifetime).
	Sessions session.Options
	// Streams configures the events and subscribe streams (how far a
	// stream's consumer may fall behind before it is ended).
	Streams streams.Options
	// Log is Store's change log, which the streams read; the caller runs
	// its trimmer. Nil: a log of Store without retention.
	Log *changelog.Log
}

// TxMaxLifetime is the longest an interactive transaction may stay open.
func (c Config) TxMaxLifetime() time.Duration {
	if c.Sessions.MaxLifetime > 0 {
		return c.Sessions.MaxLifetime
	}
	return session.DefaultMaxLifetime
}

// Defaults of Config.
const (
	DefaultMaxBodyBytes           = 16 << 20
	DefaultMaxDocumentsPerRequest = 10_000
)

// Server is the API's HTTP handler.
type Server struct {
	cfg      Config
	store    kv.Store
	log      *slog.Logger
	catalog  *catalog.Catalog
	docs     *docs.Service
	sessions *session.Manager
	messages *messages.Service
	hub      *streams.Hub
	mux      *http.ServeMux
}

// New returns the API handler over cfg.Store.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxDocumentsPerRequest <= 0 {
		cfg.MaxDocumentsPerRequest = DefaultMaxDocumentsPerRequest
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Sessions.Origin == "" {
		cfg.Sessions.Origin, _ = os.Hostname()
	}
	if cfg.Sessions.Logger == nil {
		cfg.Sessions.Logger = cfg.Logger
	}
	if cfg.Streams.Logger == nil {
		cfg.Streams.Logger = cfg.Logger
	}
	if cfg.Log == nil {
		cfg.Log = changelog.NewLog(cfg.Store, changelog.Options{Logger: cfg.Logger})
	}
	s := &Server{cfg: cfg, store: cfg.Store, log: cfg.Logger, catalog: catalog.New(), docs: docs.New(),
		sessions: session.New(cfg.Store, cfg.Sessions), messages: messages.New(), hub: streams.NewHub(cfg.Log, cfg.Streams),
		mux: http.NewServeMux()}
	s.docs.Log = cfg.Logger
	s.routes()
	return s
}

// Close ends the streams and rolls back the open interactive transactions.
// Call it after the HTTP server has stopped and before the store closes.
func (s *Server) Close() {
	s.hub.Close()
	s.sessions.Close()
}

// CloseStreams ends every events and subscribe stream, each with an error
// line that tells its client to resume from its last position. Streams
// never end by themselves, so a graceful shutdown calls it first
// (http.Server.RegisterOnShutdown): otherwise it would wait for them.
func (s *Server) CloseStreams() { s.hub.Close() }

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

	handle("POST "+coll+"/events", s.events)
	handle("POST "+coll+"/messages/publish", s.publish)
	handle("POST "+coll+"/messages/subscribe", s.subscribe)
	handle("POST "+coll+"/messages/read", s.read)
}

// ServeHTTP routes a request, answering unknown routes and methods with the
// API's JSON errors rather than the mux's plain text.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	// The mux would redirect a path with an empty segment to its cleaned
	// form; the API answers it as an invalid name instead, as the original
	// did. A segment that cannot be a name keeps it routable.
	if strings.Contains(r.URL.Path, "//") {
		r.URL.Path = strings.ReplaceAll(r.URL.Path, "//", "/-/")
		r.URL.RawPath = ""
	}
	sw := &statusWriter{ResponseWriter: w}
	if _, pattern := s.mux.Handler(r); pattern == "" {
		s.noRoute(sw, r)
	} else {
		s.mux.ServeHTTP(sw, r)
	}
	s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", time.Since(start))
}

func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "" {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 {
		s.fail(w, r, status.Errorf(status.NotFound, "Not Found"))
		return
	}
	// A 405 must say which methods the resource has (RFC 9110, 15.5.6).
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	s.fail(w, r, status.Errorf(status.MethodNotAllowed, "method %s not allowed on %s", r.Method, r.URL.Path))
}

// statusWriter remembers the status for the access log, and passes Flush on
// for streams.
type statusWriter struct {
	http.ResponseWriter
	status int
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
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// fail answers a request with the API error for err.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e, internal := toStatus(err)
	if internal {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeJSON(w, statusOf(e), errorJSON(e))
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

// decode reads the request's JSON body into v. An empty body leaves v as it
// is: every body field is optional at this level.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return status.Errorf(status.InvalidArgument, "request body larger than %d bytes", tooBig.Limit)
		}
		return status.Errorf(status.InvalidArgument, "reading request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return status.Errorf(status.InvalidArgument, "malformed JSON request: %v", err)
	}
	return nil
}

// isNull reports whether a raw JSON member is absent or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// run runs fn in a transaction of its own, retried on conflict.
func (s *Server) run(ctx context.Context, fn func(tx kv.Tx) error) error {
	_, err := kv.Run(ctx, s.store, fn)
	return err
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"response": "OK"})
	return nil
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"server_version": s.cfg.Version})
	return nil
}
