package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/httpapi"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/internal/ops"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/internal/streams"
)

// serveConfig is the server's configuration. Each setting comes from, in
// order of precedence: a flag, an environment variable, the config file,
// the default.
type serveConfig struct {
	Addr        string `json:"addr"`
	Engine      string `json:"engine"`
	PostgresURL string `json:"postgres_url"`
	DataDir     string `json:"data_dir"`
	// BackupDir is where the backup call writes (empty: the call is off).
	BackupDir string `json:"backup_dir"`
	// SearchDir holds the search indexes (empty: <data_dir>/search);
	// SearchWait bounds a search's wait for the index to catch up.
	SearchDir    string   `json:"search_dir"`
	SearchWait   duration `json:"search_wait"`
	LogLevel     string   `json:"log_level"`
	LogFormat    string   `json:"log_format"`
	MaxTxAge     duration `json:"max_tx_age"`
	TxIdle       duration `json:"tx_idle_timeout"`
	Origin       string   `json:"node_id"`
	MaxBodyBytes int64    `json:"max_body_bytes"`
	CacheBytes   int64    `json:"cache_bytes"`
	Compression  string   `json:"compression"`
	MaxDocuments int      `json:"max_documents_per_request"`
	ShutdownWait duration `json:"shutdown_timeout"`
	// PprofAddr, if set, serves net/http/pprof there, apart from the API.
	PprofAddr string `json:"pprof_addr"`
	// MetricsAddr, if set, serves /metrics there instead of on the API's
	// port.
	MetricsAddr string `json:"metrics_addr"`
	// GRPCAddr, if set, also serves the gRPC API alone there (it is always
	// served on Addr too).
	GRPCAddr string `json:"grpc_addr"`
	// CORSOrigins are the origins whose browser pages may call the API.
	CORSOrigins []string `json:"cors_origins"`
	// AllowedHosts are the host names clients reach the API by, besides
	// IP addresses, localhost and the listen and advertise addresses'.
	AllowedHosts []string `json:"allowed_hosts"`
	// LogRetention is how long the change log keeps a commit (0: forever).
	LogRetention duration `json:"log_retention"`
	// LogMaxHold is how much longer than the retention a stream that is
	// catching up may keep the log from being trimmed (0: the retention).
	LogMaxHold duration `json:"log_max_hold"`
	// LogRetentionBytes bounds what the change log takes (0: no bound).
	LogRetentionBytes int64 `json:"log_retention_bytes"`
	// StreamBuffer bounds the bytes of changes waiting for one stream.
	StreamBuffer int `json:"stream_buffer_bytes"`
	// MaxConnections caps the API's open connections.
	MaxConnections int `json:"max_connections"`
	// BodyTimeout bounds how long a request body may take to arrive;
	// WriteTimeout how long a write of a response may wait for its client.
	BodyTimeout  duration `json:"body_timeout"`
	WriteTimeout duration `json:"write_timeout"`
	// AcquireTimeout bounds a request's wait for a PostgreSQL connection
	// or a read slot (0: 2s). MaxOpenTx and MaxReads bound the interactive
	// transactions and the streaming reads that hold connections (0: a
	// share of the PostgreSQL pool, unlimited on pebble; -1: unlimited).
	AcquireTimeout duration `json:"acquire_timeout"`
	MaxOpenTx      int      `json:"max_open_transactions"`
	MaxReads       int      `json:"max_concurrent_reads"`

	// RequestTimeout bounds every request but the streams.
	RequestTimeout duration `json:"request_timeout"`
	// StreamBufferTotal bounds the bytes of changes waiting for all the
	// streams together.
	StreamBufferTotal int64 `json:"stream_buffer_total_bytes"`
	// MaxStreams bounds the events and subscribe streams open at once.
	MaxStreams int `json:"max_streams"`

	// Auth makes every call but health, info and the token endpoint need
	// an access token; OwnerFile holds the owner's credentials.
	Auth       bool     `json:"auth"`
	OwnerFile  string   `json:"owner_file"`
	TokenTTL   duration `json:"token_ttl"`
	RefreshTTL duration `json:"refresh_token_ttl"`
	Audience   string   `json:"token_audience"`
	// TLSCert and TLSKey serve the API over TLS.
	TLSCert string `json:"tls_cert"`
	TLSKey  string `json:"tls_key"`
	// LogRequests logs every request (failed ones always are);
	// SlowRequest is the duration past which one is logged as slow (0:
	// none is).
	LogRequests bool     `json:"log_requests"`
	SlowRequest duration `json:"slow_request"`
	// AdvertiseAddr is where the other nodes on the same PostgreSQL
	// database reach this one; NodeLease how long its registration lasts
	// unless renewed.
	AdvertiseAddr string   `json:"advertise_addr"`
	NodeLease     duration `json:"node_lease"`
	// GCPercent is the Go garbage collector's target, unless the GOGC
	// environment variable sets it.
	GCPercent int `json:"gc_percent"`
}

// DefaultGCPercent is the garbage collector's target: the heap may grow to
// five times what is live before a collection. Go's own 100 made the
// collector a tenth of the server's CPU under point reads, whose live heap
// is small (the block cache is outside it); 400 took 11 to 21% off the CPU
// per request (docs/benchmarks.md, issue 16).
const DefaultGCPercent = 400

// DefaultLogRetention is how long the change log keeps a commit, and so how
// far back an events or subscribe stream can resume.
const DefaultLogRetention = 24 * time.Hour

// DefaultLogRetentionBytes bounds the change log by size too: a day of
// heavy writes could otherwise hold many times the data in log records.
// 128 MiB keeps over a hundred thousand changes of 1 KB to resume from.
const DefaultLogRetentionBytes = 128 << 20

func defaultConfig() serveConfig {
	return serveConfig{
		Addr:              "localhost:8081",
		Engine:            "pebble",
		DataDir:           "./data",
		LogLevel:          "info",
		LogFormat:         "text",
		MaxTxAge:          duration(pebblekv.DefaultMaxTxAge),
		CacheBytes:        pebblekv.DefaultCacheSize,
		GCPercent:         DefaultGCPercent,
		TxIdle:            duration(session.DefaultIdleTimeout),
		MaxBodyBytes:      httpapi.DefaultMaxBodyBytes,
		MaxDocuments:      ops.DefaultMaxDocumentsPerRequest,
		ShutdownWait:      duration(node.DefaultShutdownTimeout),
		LogRetention:      duration(DefaultLogRetention),
		LogRetentionBytes: DefaultLogRetentionBytes,
		StreamBuffer:      streams.DefaultMaxPending,

		RequestTimeout:    duration(ops.DefaultRequestTimeout),
		SlowRequest:       duration(node.DefaultSlowRequest),
		StreamBufferTotal: streams.DefaultMaxPendingTotal,
		MaxStreams:        streams.DefaultMaxStreams,
	}
}

// duration is a time.Duration written as "10m" in the config file.
type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"10m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	*d = duration(v)
	return err
}

func (d *duration) String() string     { return time.Duration(*d).String() }
func (d *duration) Set(s string) error { v, err := time.ParseDuration(s); *d = duration(v); return err }

// setting is one configuration setting with its flag and its environment
// variable; its key in the config file is serveConfig's JSON tag.
type setting struct {
	flag, env string
	usage     string
	def       string // the default, as the usage shows it
	set       func(c *serveConfig, value string) error
}

// switches are the settings whose flag may stand alone (--auth means
// --auth=true), as boolean flags do.
var switches = map[string]bool{"auth": true, "log-requests": true}

// settings lists every setting `folio serve` takes from flags and the
// environment: one row each, so that a new one cannot miss a place.
func settings() []setting {
	return []setting{
		{"addr", "FOLIO_ADDR", "address to listen on (HTTP/1.1, HTTP/2 without TLS and gRPC); :8081 listens on every interface", "localhost:8081", text(func(c *serveConfig) *string { return &c.Addr })},
		{"grpc-addr", "FOLIO_GRPC_ADDR", "also serve the gRPC API alone on this address, with gRPC's own transport", "off", text(func(c *serveConfig) *string { return &c.GRPCAddr })},
		{"engine", "FOLIO_ENGINE", "storage engine: pebble (embedded) or postgres", "pebble", text(func(c *serveConfig) *string { return &c.Engine })},
		{"postgres-url", "FOLIO_POSTGRES_URL", "PostgreSQL connection URL for --engine postgres", "none", text(func(c *serveConfig) *string { return &c.PostgresURL })},
		{"data-dir", "FOLIO_DATA_DIR", "directory of the embedded store, and of the search indexes unless --search-dir says otherwise", "./data", text(func(c *serveConfig) *string { return &c.DataDir })},
		{"backup-dir", "FOLIO_BACKUP_DIR", "directory the backup call (folio backup --url) writes under: a backup's --to names a directory in it; without it the call is refused", "off", text(func(c *serveConfig) *string { return &c.BackupDir })},
		{"search-dir", "FOLIO_SEARCH_DIR", "directory of the search indexes, one per collection, rebuilt from the documents if removed", "<data-dir>/search", text(func(c *serveConfig) *string { return &c.SearchDir })},
		{"search-wait", "FOLIO_SEARCH_WAIT", "how long a search waits for the index to catch up with the writes acknowledged before it, then answers 503 UNAVAILABLE", "5s", dur(func(c *serveConfig) *duration { return &c.SearchWait })},
		{"cache-mib", "FOLIO_CACHE_MIB", "embedded engine's caches in MiB: a quarter for documents read, the rest for Pebble's block cache", "128", mebibytes(func(c *serveConfig) *int64 { return &c.CacheBytes })},
		{"compression", "FOLIO_COMPRESSION", "embedded engine's table compression: snappy (fastest) or zstd (about a third less disk for text, fewer writes a second where CPU is short)", "snappy", text(func(c *serveConfig) *string { return &c.Compression })},
		{"log-level", "FOLIO_LOG_LEVEL", "debug, info, warn or error", "info", text(func(c *serveConfig) *string { return &c.LogLevel })},
		{"log-format", "FOLIO_LOG_FORMAT", "text or json", "text", text(func(c *serveConfig) *string { return &c.LogFormat })},
		{"log-requests", "FOLIO_LOG_REQUESTS", "log every request at info level (--log-requests, or true or false); failed ones are logged whatever this says", "false", boolean(func(c *serveConfig) *bool { return &c.LogRequests })},
		{"slow-request", "FOLIO_SLOW_REQUEST", "log a request that takes longer than this at warn level, with the query plans it ran; 0 logs none as slow", "1s", dur(func(c *serveConfig) *duration { return &c.SlowRequest })},
		{"max-tx-age", "FOLIO_MAX_TX_AGE", "longest a transaction may stay open", "10m", dur(func(c *serveConfig) *duration { return &c.MaxTxAge })},
		{"tx-idle-timeout", "FOLIO_TX_IDLE_TIMEOUT", "an interactive transaction with no request for this long is rolled back", "2m", dur(func(c *serveConfig) *duration { return &c.TxIdle })},
		{"node-id", "FOLIO_NODE_ID", "this node's identity in transaction contexts, unique among the nodes on one PostgreSQL database", "<host name>-<port>", text(func(c *serveConfig) *string { return &c.Origin })},
		{"advertise-addr", "FOLIO_ADVERTISE_ADDR", "host:port where the other nodes on the same PostgreSQL database reach this one, to forward it the requests of its transactions", "the listen address (the host name for one on every interface)", text(func(c *serveConfig) *string { return &c.AdvertiseAddr })},
		{"node-lease", "FOLIO_NODE_LEASE", "how long this node's registration among the nodes on one PostgreSQL database lasts unless renewed: the others know it gone, and its id free, within it", "10s", dur(func(c *serveConfig) *duration { return &c.NodeLease })},
		{"log-retention", "FOLIO_LOG_RETENTION", "how long the change log keeps a commit, and so how far back events and subscribe streams can resume; 0 keeps it forever", "24h", dur(func(c *serveConfig) *duration { return &c.LogRetention })},
		{"log-retention-mib", "FOLIO_LOG_RETENTION_MIB", "most the change log may take, in MiB (its records as stored): past it the oldest changes go, whatever --log-retention says, and streams that had not read them are cut off; 0: no bound", "128", mebibytesOrNone(func(c *serveConfig) *int64 { return &c.LogRetentionBytes })},
		{"log-max-hold", "FOLIO_LOG_MAX_HOLD", "how much longer than the retention a stream catching up may keep the log from being trimmed before it is cut off and must resync", "the retention", dur(func(c *serveConfig) *duration { return &c.LogMaxHold })},
		{"request-timeout", "FOLIO_REQUEST_TIMEOUT", "longest a request may run, a read's streaming included, before it fails with DEADLINE_EXCEEDED and its writes are dropped; events and subscribe streams have none", "30s", dur(func(c *serveConfig) *duration { return &c.RequestTimeout })},
		{"max-connections", "FOLIO_MAX_CONNECTIONS", "most connections open at once; past it new ones wait", "4096", number(func(c *serveConfig) *int { return &c.MaxConnections })},
		{"body-timeout", "FOLIO_BODY_TIMEOUT", "how long a request body may take to arrive", "30s", dur(func(c *serveConfig) *duration { return &c.BodyTimeout })},
		{"write-timeout", "FOLIO_WRITE_TIMEOUT", "how long a write of a response or stream may wait for the client to read", "30s", dur(func(c *serveConfig) *duration { return &c.WriteTimeout })},
		{"stream-buffer-bytes", "FOLIO_STREAM_BUFFER_BYTES", "bytes of changes an events or subscribe stream may have waiting before it is ended as too slow", "16777216", number(func(c *serveConfig) *int { return &c.StreamBuffer })},
		{"stream-buffer-total-bytes", "FOLIO_STREAM_BUFFER_TOTAL_BYTES", "bytes of changes all the events and subscribe streams together may have waiting; past it the stream furthest behind is ended", "268435456", number(func(c *serveConfig) *int64 { return &c.StreamBufferTotal })},
		{"max-streams", "FOLIO_MAX_STREAMS", "events and subscribe streams open at once; one more is refused with 429 RESOURCE_EXHAUSTED", "1000", number(func(c *serveConfig) *int { return &c.MaxStreams })},
		{"acquire-timeout", "FOLIO_ACQUIRE_TIMEOUT", "how long a request waits for a PostgreSQL connection, or a read for its slot, before it answers 503 UNAVAILABLE", "2s", dur(func(c *serveConfig) *duration { return &c.AcquireTimeout })},
		{"max-open-transactions", "FOLIO_MAX_OPEN_TRANSACTIONS", "interactive transactions open at once on this node; a begin beyond it answers 503 UNAVAILABLE; -1: unlimited", "a quarter of the PostgreSQL pool, unlimited on pebble", number(func(c *serveConfig) *int { return &c.MaxOpenTx })},
		{"max-concurrent-reads", "FOLIO_MAX_CONCURRENT_READS", "reads streaming at once outside transactions; one beyond it waits up to the acquire timeout, then answers 503 UNAVAILABLE; -1: unlimited", "half the PostgreSQL pool, unlimited on pebble", number(func(c *serveConfig) *int { return &c.MaxReads })},
		{"cors-origins", "FOLIO_CORS_ORIGINS", "comma-separated origins whose browser pages may call the API, or * for any", "none: cross-origin calls stay off", list(func(c *serveConfig) *[]string { return &c.CORSOrigins })},
		{"allowed-hosts", "FOLIO_ALLOWED_HOSTS", "comma-separated host names clients reach the API by, besides IP addresses, localhost and the hosts of --addr and --advertise-addr, or * for any; once set, a request that names another host in its Host header is refused, as it always is on a server that listens on loopback only (DNS rebinding)", "none: the names above", list(func(c *serveConfig) *[]string { return &c.AllowedHosts })},
		{"auth", "FOLIO_AUTH", "require an access token on every call but health, info and the token endpoint (--auth, or true or false)", "false", boolean(func(c *serveConfig) *bool { return &c.Auth })},
		{"owner-file", "FOLIO_OWNER_FILE", "file of the owner application's credentials: read at the first start with --auth if it exists (to choose them), written there otherwise", "<data-dir>/owner.json", text(func(c *serveConfig) *string { return &c.OwnerFile })},
		{"token-ttl", "FOLIO_TOKEN_TTL", "how long an access token is valid", "1h", dur(func(c *serveConfig) *duration { return &c.TokenTTL })},
		{"refresh-token-ttl", "FOLIO_REFRESH_TOKEN_TTL", "how long a refresh token is valid", "24h", dur(func(c *serveConfig) *duration { return &c.RefreshTTL })},
		{"token-audience", "FOLIO_TOKEN_AUDIENCE", "the audience tokens are issued for and must name; nodes that share a store share it", "folio", text(func(c *serveConfig) *string { return &c.Audience })},
		{"tls-cert", "FOLIO_TLS_CERT", "PEM certificate (chain) to serve the API over TLS with; needs --tls-key", "off", text(func(c *serveConfig) *string { return &c.TLSCert })},
		{"tls-key", "FOLIO_TLS_KEY", "PEM private key of --tls-cert", "off", text(func(c *serveConfig) *string { return &c.TLSKey })},
		{"metrics-addr", "FOLIO_METRICS_ADDR", "serve the Prometheus metrics (/metrics) on this address instead of on the API's port", "the API's port", text(func(c *serveConfig) *string { return &c.MetricsAddr })},
		{"gc-percent", "FOLIO_GC_PERCENT", "Go garbage collector's target (GOGC): the heap grows to 1+N/100 times what is live before a collection; the GOGC environment variable, if set, wins; -1 turns the collector off", "400", number(func(c *serveConfig) *int { return &c.GCPercent })},
		{"pprof-addr", "FOLIO_PPROF_ADDR", "serve Go's profiler (net/http/pprof) on this address, such as 127.0.0.1:6060; keep it on loopback", "off", text(func(c *serveConfig) *string { return &c.PprofAddr })},
	}
}

func text(field func(*serveConfig) *string) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error { *field(c) = v; return nil }
}

// switchFlag is a boolean flag kept as the text it was given, so that
// "not given" stays apart from false (the environment and the file then
// decide): --auth alone is "true".
type switchFlag struct{ v *string }

func (f switchFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}
func (f switchFlag) Set(s string) error { *f.v = s; return nil }
func (f switchFlag) IsBoolFlag() bool   { return true }

func boolean(field func(*serveConfig) *bool) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%q: want true or false", v)
		}
		*field(c) = b
		return nil
	}
}

func dur(field func(*serveConfig) *duration) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error { return field(c).Set(v) }
}

func number[T int | int64](field func(*serveConfig) *T) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not a whole number", v)
		}
		*field(c) = T(n)
		return nil
	}
}

func mebibytes(field func(*serveConfig) *int64) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("%q: want a positive number of MiB", v)
		}
		*field(c) = n << 20
		return nil
	}
}

// mebibytesOrNone is mebibytes where 0 is allowed, meaning no bound.
func mebibytesOrNone(field func(*serveConfig) *int64) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 || n > 1<<43 {
			return fmt.Errorf("%q: want a number of MiB, 0 for none", v)
		}
		*field(c) = n << 20
		return nil
	}
}

func list(field func(*serveConfig) *[]string) func(*serveConfig, string) error {
	return func(c *serveConfig, v string) error {
		var out []string
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
		*field(c) = out
		return nil
	}
}

func loadConfig(args []string) (serveConfig, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configFile := fs.String("config", os.Getenv("FOLIO_CONFIG"), "JSON config file (env FOLIO_CONFIG)")
	all := settings()
	flags := make([]*string, len(all))
	for i, s := range all {
		usage := fmt.Sprintf("%s (env %s; default %s)", s.usage, s.env, s.def)
		if switches[s.flag] {
			flags[i] = new(string)
			fs.Var(switchFlag{flags[i]}, s.flag, usage)
			continue
		}
		flags[i] = fs.String(s.flag, "", usage)
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if *configFile != "" {
		b, err := os.ReadFile(*configFile)
		if err != nil {
			return cfg, fmt.Errorf("config file: %w", err)
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return cfg, fmt.Errorf("config file %s: %w", *configFile, err)
		}
	}
	// The environment beats the file, and a flag beats both.
	for i, s := range all {
		v := os.Getenv(s.env)
		if *flags[i] != "" {
			v = *flags[i]
		}
		if v == "" {
			continue
		}
		if err := s.set(&cfg, v); err != nil {
			return cfg, fmt.Errorf("--%s: %w", s.flag, err)
		}
	}
	return cfg, cfg.check()
}

// check refuses settings out of their range.
func (c serveConfig) check() error {
	for _, d := range []struct {
		name     string
		v        duration
		positive bool
	}{
		{"log-max-hold", c.LogMaxHold, false},
		{"log-retention", c.LogRetention, false},
		{"acquire-timeout", c.AcquireTimeout, false},
		{"body-timeout", c.BodyTimeout, false},
		{"write-timeout", c.WriteTimeout, false},
		{"request-timeout", c.RequestTimeout, true},
		{"token-ttl", c.TokenTTL, false},
		{"refresh-token-ttl", c.RefreshTTL, false},
		{"slow-request", c.SlowRequest, false},
		{"node-lease", c.NodeLease, false},
	} {
		if d.v < 0 || (d.positive && d.v == 0) {
			return fmt.Errorf("--%s %v: must be %s", d.name, time.Duration(d.v), map[bool]string{true: "positive", false: "zero or more"}[d.positive])
		}
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"stream-buffer-bytes", int64(c.StreamBuffer)},
		{"stream-buffer-total-bytes", c.StreamBufferTotal},
		{"max-streams", int64(c.MaxStreams)},
	} {
		if n.v <= 0 {
			return fmt.Errorf("--%s %d: must be positive", n.name, n.v)
		}
	}
	if c.LogRetentionBytes < 0 {
		return fmt.Errorf("log_retention_bytes %d: must be zero or more", c.LogRetentionBytes)
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("--max-connections %d: must be positive", c.MaxConnections)
	}
	if c.GCPercent < -1 {
		return fmt.Errorf("--gc-percent %d: must be zero or more, or -1 to turn the collector off", c.GCPercent)
	}
	return nil
}

func newLogger(cfg serveConfig, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", cfg.LogLevel, err)
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: readableDurations}
	switch cfg.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", cfg.LogFormat)
}

// readableDurations writes durations as "1.5ms" rather than the JSON
// handler's bare nanoseconds, which nobody reading a log can take in.
func readableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

func serve(args []string) error {
	cfg, err := loadConfig(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log, err := newLogger(cfg, os.Stderr)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(cfg.GCPercent)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return node.Run(ctx, nodeConfig(cfg, log))
}

// nodeConfig is the node a configuration describes.
func nodeConfig(cfg serveConfig, log *slog.Logger) node.Config {
	return node.Config{
		Engine:                 cfg.Engine,
		DataDir:                cfg.DataDir,
		SearchDir:              cfg.SearchDir,
		BackupDir:              cfg.BackupDir,
		SearchWait:             time.Duration(cfg.SearchWait),
		PostgresURL:            cfg.PostgresURL,
		CacheBytes:             cfg.CacheBytes,
		Compression:            cfg.Compression,
		MaxTxAge:               time.Duration(cfg.MaxTxAge),
		AcquireTimeout:         time.Duration(cfg.AcquireTimeout),
		MaxConcurrentReads:     cfg.MaxReads,
		Addr:                   cfg.Addr,
		PprofAddr:              cfg.PprofAddr,
		MetricsAddr:            cfg.MetricsAddr,
		GRPCAddr:               cfg.GRPCAddr,
		CORSOrigins:            cfg.CORSOrigins,
		AllowedHosts:           cfg.AllowedHosts,
		Logger:                 log,
		Version:                version,
		MaxBodyBytes:           cfg.MaxBodyBytes,
		MaxDocumentsPerRequest: cfg.MaxDocuments,
		Sessions:               session.Options{Origin: cfg.Origin, IdleTimeout: time.Duration(cfg.TxIdle), MaxOpen: cfg.MaxOpenTx},
		Streams:                streams.Options{MaxPending: cfg.StreamBuffer, MaxPendingTotal: cfg.StreamBufferTotal, MaxStreams: cfg.MaxStreams},
		LogRetention:           time.Duration(cfg.LogRetention),
		LogMaxHold:             time.Duration(cfg.LogMaxHold),
		LogMaxBytes:            cfg.LogRetentionBytes,
		ShutdownTimeout:        time.Duration(cfg.ShutdownWait),
		MaxConnections:         cfg.MaxConnections,
		BodyTimeout:            time.Duration(cfg.BodyTimeout),
		WriteTimeout:           time.Duration(cfg.WriteTimeout),
		RequestTimeout:         time.Duration(cfg.RequestTimeout),
		Auth:                   cfg.Auth,
		OwnerFile:              cfg.OwnerFile,
		Tokens:                 auth.Config{AccessTTL: time.Duration(cfg.TokenTTL), RefreshTTL: time.Duration(cfg.RefreshTTL), Audience: cfg.Audience},
		TLSCert:                cfg.TLSCert,
		TLSKey:                 cfg.TLSKey,
		LogRequests:            cfg.LogRequests,
		AdvertiseAddr:          cfg.AdvertiseAddr,
		NodeLease:              time.Duration(cfg.NodeLease),
		SlowRequest:            slowRequest(cfg.SlowRequest),
	}
}

// slowRequest is --slow-request as the node takes it: 0 there takes the
// default, and a negative duration turns the slow log off.
func slowRequest(d duration) time.Duration {
	if d == 0 {
		return -1
	}
	return time.Duration(d)
}
