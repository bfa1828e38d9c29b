package node

import (
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/cluster"
	"github.com/foliodb/folio/internal/expiry"
	"github.com/foliodb/folio/internal/httpapi"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/ops"
	"github.com/foliodb/folio/internal/search"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/internal/streams"
)

// Config is a node's configuration: the node's own settings (the store to
// open, the listeners, authentication, shutdown) and each part's options.
// Start from DefaultConfig, the one place the defaults live, as `folio
// serve` and the tests do; a zero value means what the field's comment
// says (often "off"), not "the default".
//
// A few settings span parts and so are the node's: MaxTxAge (both engines,
// and the interactive transactions' lifetime), AcquireTimeout (PostgreSQL's
// pool and the operations' read slots), DataDir (the embedded store, and the
// default of the search indexes and the owner file). The node fills each
// part's fields that it owns (loggers, the shared parts, the version) at
// Start; what is set there in Config is ignored.
type Config struct {
	// Store, if set, is the store to run on; the node closes it at
	// shutdown. Otherwise the node opens the one Engine names.
	Store kv.Store
	// Engine is "pebble" (embedded, in DataDir) or "postgres" (at
	// Postgres.URL).
	Engine  string
	DataDir string
	// Pebble configures the embedded engine (its cache and compression;
	// Dir is DataDir), Postgres the PostgreSQL one (its URL).
	Pebble   pebblekv.Options
	Postgres PostgresOptions
	// MaxTxAge is the longest a transaction may stay open, interactive
	// ones included.
	MaxTxAge time.Duration
	// AcquireTimeout bounds how long a request waits for a connection to
	// PostgreSQL, or a read for its slot (Ops.MaxConcurrentReads), before
	// it is answered 503 UNAVAILABLE.
	AcquireTimeout time.Duration

	// Addr is the API's listen address ("127.0.0.1:0" picks a free port):
	// HTTP/1.1, HTTP/2 without TLS (prior knowledge) and gRPC, on one port.
	Addr string
	// GRPCAddr, if set, also serves the gRPC API alone on a listener of its
	// own, with gRPC's native HTTP/2 transport (see docs/operations.md).
	GRPCAddr string
	// PprofAddr, if set, serves Go's profiler there, apart from the API.
	PprofAddr string
	// MetricsAddr, if set, serves the Prometheus metrics (/metrics) on a
	// listener of their own, and the API's port no longer serves them;
	// unset, the API's port serves /metrics, without authentication.
	MetricsAddr string
	// CORSOrigins are the origins whose browser pages may call the API;
	// none keeps cross-origin calls off.
	CORSOrigins []string
	// AllowedHosts are the host names clients reach the API by, besides
	// IP addresses, localhost and the listen and advertise addresses'
	// hosts ("*": any). A request that names another host in its Host
	// header is refused (DNS rebinding, see httpapi.Hosts): every request
	// if the API listens on loopback only or AllowedHosts is set, a
	// browser's (one with an Origin) otherwise.
	AllowedHosts []string
	// MaxConnections caps the API's open connections; past it new ones
	// wait (0: the default).
	MaxConnections int
	// MaxBodyBytes bounds a request body, over HTTP and gRPC alike.
	// BodyTimeout bounds how long a request body may take to arrive;
	// WriteTimeout how long a write of a response may wait for its client.
	// Zero takes the default.
	MaxBodyBytes              int64
	BodyTimeout, WriteTimeout time.Duration
	// HTTP1Server is the server of HTTP/1.x connections: HTTP1FastHTTP
	// (the default, "" too) or HTTP1NetHTTP, Go's own, which serves
	// HTTP/2 in both cases.
	HTTP1Server string
	// Console serves the web console at /console/ on the API's port, and
	// redirects / there (internal/console); off, those paths are the
	// API's 404s as before.
	Console bool
	// TLSCert and TLSKey, both set, serve the API's port (and GRPCAddr's)
	// over TLS only: HTTPS, HTTP/2 and gRPC.
	TLSCert, TLSKey string
	// ShutdownTimeout bounds how long a shutdown waits for requests in
	// flight (0: the default).
	ShutdownTimeout time.Duration

	// Auth makes every call but health, info and the token endpoint need
	// an access token (docs/operations.md). OwnerFile holds the owner
	// application's credentials: read at the first start with Auth if it
	// exists, written there otherwise. Empty: <DataDir>/owner.json.
	Auth      bool
	OwnerFile string
	// Tokens configures tokens: lifetimes, audience, the limit on failed
	// requests.
	Tokens auth.Config

	// Ops are the operations' settings: request limits and timeouts, the
	// request log, the search wait, the backup directory. Its RequireAuth
	// is Auth's, its ReadWait AcquireTimeout's.
	Ops ops.Options
	// Sessions configures interactive transactions (origin, idle timeout,
	// maximum lifetime; the lifetime defaults to MaxTxAge). Its MaxOpen
	// left at 0 takes a share of the store: on a store with a connection
	// pool (PostgreSQL), a quarter of the pool, so that open transactions
	// never hold every connection; unlimited on the embedded store.
	// Negative: unlimited. Ops.MaxConcurrentReads at 0 likewise takes half
	// the pool.
	Sessions session.Options
	// Streams configures the events and subscribe streams: how many may
	// be open at once, and the bytes queued for each and for all.
	Streams streams.Options
	// ChangeLog configures the change log's retention: how long it keeps
	// a commit (0: forever), how much longer a reader catching up may hold
	// it (0: as long again), and the bytes it may take (0: no bound).
	ChangeLog changelog.Options
	// Search configures the search indexer. Its Dir defaults to
	// <DataDir>/search when the node opens its store itself (for either
	// engine); with a Store given and no Dir, the indexes are kept in
	// memory and rebuilt at every start.
	Search search.Options
	// Cluster configures this node's registration among the nodes on one
	// PostgreSQL database. AdvertiseAddr is where the other nodes reach
	// this one's API (host:port), to forward it the requests of its
	// transactions; empty: the API's listen address, with the host name
	// for an address that listens on every interface.
	Cluster       cluster.Options
	AdvertiseAddr string
	// Expiry configures the sweeper that deletes documents past their
	// collection's ttl: its pace, and for tests its clock (which the
	// documents' reads then share) and whether it may sweep (Leader; by
	// default the node with the least id among those on one PostgreSQL
	// database sweeps, and a lone node always does).
	Expiry expiry.Options

	// Log is the log's level and format, for NewLogger; Logger is the log
	// the node writes to (none if nil).
	Log    LogOptions
	Logger *slog.Logger
	// Version is what the info call and the metrics report.
	Version string
	// GCPercent is the Go garbage collector's target that Run sets, unless
	// the GOGC environment variable sets it. Start leaves it alone: it is
	// the process's, not the node's.
	GCPercent int
}

// PostgresOptions configure the PostgreSQL engine. Its pool's size is the
// URL's pool_max_conns.
type PostgresOptions struct {
	URL string
}

// LogOptions are the log's level (debug, info, warn or error) and format
// (text or json).
type LogOptions struct {
	Level, Format string
}

// Defaults of Config, besides those of the parts' own packages.
const (
	DefaultAddr            = "localhost:8081"
	DefaultDataDir         = "./data"
	DefaultSlowRequest     = time.Second
	DefaultShutdownTimeout = 30 * time.Second
	DefaultMaxConnections  = 4096
	// The servers of HTTP/1.x connections (Config.HTTP1Server).
	HTTP1FastHTTP = "fasthttp"
	HTTP1NetHTTP  = "net/http"
	// DefaultGCPercent is the garbage collector's target: the heap may grow
	// to five times what is live before a collection. Go's own 100 made
	// the collector a tenth of the server's CPU under point reads, whose
	// live heap is small (the block cache is outside it); 400 took 11 to
	// 21% off the CPU per request (docs/benchmarks.md, issue 16).
	DefaultGCPercent = 400
	// DefaultLogRetention is how long the change log keeps a commit, and so
	// how far back an events or subscribe stream can resume.
	DefaultLogRetention = 24 * time.Hour
	// DefaultLogRetentionBytes bounds the change log by size too: a day of
	// heavy writes could otherwise hold many times the data in log
	// records. 128 MiB keeps over a hundred thousand changes of 1 KB to
	// resume from.
	DefaultLogRetentionBytes = 128 << 20
)

// DefaultConfig is the configuration `folio serve` runs with when nothing
// is set: the one place the node's defaults live. Tests start from it too,
// so that they run what the binary runs.
func DefaultConfig() Config {
	return Config{
		Engine:          "pebble",
		DataDir:         DefaultDataDir,
		Pebble:          pebblekv.Options{CacheSize: pebblekv.DefaultCacheSize, Compression: pebblekv.CompressSnappy},
		MaxTxAge:        pebblekv.DefaultMaxTxAge,
		AcquireTimeout:  ops.DefaultReadWait,
		Addr:            DefaultAddr,
		MaxConnections:  DefaultMaxConnections,
		MaxBodyBytes:    httpapi.DefaultMaxBodyBytes,
		BodyTimeout:     httpapi.DefaultBodyTimeout,
		WriteTimeout:    httpapi.DefaultWriteTimeout,
		HTTP1Server:     HTTP1FastHTTP,
		Console:         true,
		ShutdownTimeout: DefaultShutdownTimeout,
		Tokens:          auth.Config{Audience: auth.DefaultIssuer, AccessTTL: auth.DefaultAccessTTL, RefreshTTL: auth.DefaultRefreshTTL},
		Ops: ops.Options{
			MaxDocumentsPerRequest: ops.DefaultMaxDocumentsPerRequest,
			MaxAggregateGroups:     ops.DefaultMaxAggregateGroups,
			RequestTimeout:         ops.DefaultRequestTimeout,
			SearchWait:             ops.DefaultSearchWait,
			SlowRequest:            DefaultSlowRequest,
		},
		Sessions:  session.Options{IdleTimeout: session.DefaultIdleTimeout},
		Streams:   streams.Options{MaxPending: streams.DefaultMaxPending, MaxPendingTotal: streams.DefaultMaxPendingTotal, MaxStreams: streams.DefaultMaxStreams},
		ChangeLog: changelog.Options{Retention: DefaultLogRetention, MaxBytes: DefaultLogRetentionBytes},
		Cluster:   cluster.Options{Lease: cluster.DefaultLease},
		Log:       LogOptions{Level: "info", Format: "text"},
		Version:   "dev",
		GCPercent: DefaultGCPercent,
	}
}

// NewLogger is the log o describes, writing to w.
func NewLogger(o LogOptions, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.Level)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", o.Level, err)
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: readableDurations}
	switch o.Format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", o.Format)
}

// readableDurations writes durations as "1.5ms" rather than the JSON
// handler's bare nanoseconds, which nobody reading a log can take in.
func readableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// DefaultConfigWith is DefaultConfig with set applied: a configuration
// written as the settings that differ from the binary's, as tests write
// theirs.
func DefaultConfigWith(set func(c *Config)) Config {
	c := DefaultConfig()
	set(&c)
	return c
}
