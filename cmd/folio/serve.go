package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

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
	Addr         string   `json:"addr"`
	Engine       string   `json:"engine"`
	PostgresURL  string   `json:"postgres_url"`
	DataDir      string   `json:"data_dir"`
	LogLevel     string   `json:"log_level"`
	LogFormat    string   `json:"log_format"`
	MaxTxAge     duration `json:"max_tx_age"`
	TxIdle       duration `json:"tx_idle_timeout"`
	Origin       string   `json:"node_id"`
	MaxBodyBytes int64    `json:"max_body_bytes"`
	CacheBytes   int64    `json:"cache_bytes"`
	MaxDocuments int      `json:"max_documents_per_request"`
	ShutdownWait duration `json:"shutdown_timeout"`
	// PprofAddr, if set, serves net/http/pprof there, apart from the API.
	PprofAddr string `json:"pprof_addr"`
	// CORSOrigins are the origins whose browser pages may call the API.
	CORSOrigins []string `json:"cors_origins"`
	// LogRetention is how long the change log keeps a commit (0: forever).
	LogRetention duration `json:"log_retention"`
	// LogMaxHold is how much longer than the retention a stream that is
	// catching up may keep the log from being trimmed (0: the retention).
	LogMaxHold duration `json:"log_max_hold"`
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
}

// DefaultLogRetention is how long the change log keeps a commit, and so how
// far back an events or subscribe stream can resume.
const DefaultLogRetention = 24 * time.Hour

func defaultConfig() serveConfig {
	return serveConfig{
		Addr:         "localhost:8081",
		Engine:       "pebble",
		DataDir:      "./data",
		LogLevel:     "info",
		LogFormat:    "text",
		MaxTxAge:     duration(pebblekv.DefaultMaxTxAge),
		CacheBytes:   pebblekv.DefaultCacheSize,
		TxIdle:       duration(session.DefaultIdleTimeout),
		MaxBodyBytes: httpapi.DefaultMaxBodyBytes,
		MaxDocuments: ops.DefaultMaxDocumentsPerRequest,
		ShutdownWait: duration(node.DefaultShutdownTimeout),
		LogRetention: duration(DefaultLogRetention),
		StreamBuffer: streams.DefaultMaxPending,

		RequestTimeout:    duration(ops.DefaultRequestTimeout),
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

func loadConfig(args []string) (serveConfig, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	configFile := fs.String("config", os.Getenv("FOLIO_CONFIG"), "JSON config file (env FOLIO_CONFIG)")
	addr := fs.String("addr", "", "address to listen on; :8081 listens on every interface (env FOLIO_ADDR; default localhost:8081)")
	cacheMiB := fs.Int64("cache-mib", 0, "embedded engine's block cache in MiB (env FOLIO_CACHE_MIB; default 128)")
	engine := fs.String("engine", "", "storage engine: pebble (embedded) or postgres (env FOLIO_ENGINE; default pebble)")
	pgURL := fs.String("postgres-url", "", "PostgreSQL connection URL for --engine postgres (env FOLIO_POSTGRES_URL)")
	dataDir := fs.String("data-dir", "", "directory of the embedded store (env FOLIO_DATA_DIR; default ./data)")
	logLevel := fs.String("log-level", "", "debug, info, warn or error (env FOLIO_LOG_LEVEL; default info)")
	logFormat := fs.String("log-format", "", "text or json (env FOLIO_LOG_FORMAT; default text)")
	maxTxAge := fs.String("max-tx-age", "", "longest a transaction may stay open (env FOLIO_MAX_TX_AGE; default 10m)")
	txIdle := fs.String("tx-idle-timeout", "", "an interactive transaction with no request for this long is rolled back (env FOLIO_TX_IDLE_TIMEOUT; default 2m)")
	origin := fs.String("node-id", "", "this node's identity in transaction contexts (env FOLIO_NODE_ID; default the host name)")
	logRetention := fs.String("log-retention", "", "how long the change log keeps a commit, and so how far back events and subscribe streams can resume; 0 keeps it forever (env FOLIO_LOG_RETENTION; default 24h)")
	logMaxHold := fs.String("log-max-hold", "", "how much longer than the retention a stream catching up may keep the log from being trimmed before it is cut off and must resync (env FOLIO_LOG_MAX_HOLD; default the retention)")
	maxConns := fs.String("max-connections", "", "most connections open at once; past it new ones wait (env FOLIO_MAX_CONNECTIONS; default 4096)")
	bodyTimeout := fs.String("body-timeout", "", "how long a request body may take to arrive (env FOLIO_BODY_TIMEOUT; default 30s)")
	writeTimeout := fs.String("write-timeout", "", "how long a write of a response or stream may wait for the client to read (env FOLIO_WRITE_TIMEOUT; default 30s)")
	streamBuffer := fs.String("stream-buffer-bytes", "", "bytes of changes an events or subscribe stream may have waiting before it is ended as too slow (env FOLIO_STREAM_BUFFER_BYTES; default 16777216)")
	corsOrigins := fs.String("cors-origins", "", "comma-separated origins whose browser pages may call the API, or * for any (env FOLIO_CORS_ORIGINS; default none: cross-origin calls stay off)")
	requestTimeout := fs.String("request-timeout", "", "longest a request may run, a read's streaming included, before it fails with DEADLINE_EXCEEDED and its writes are dropped; events and subscribe streams have none (env FOLIO_REQUEST_TIMEOUT; default 30s)")
	streamBufferTotal := fs.String("stream-buffer-total-bytes", "", "bytes of changes all the events and subscribe streams together may have waiting; past it the stream furthest behind is ended (env FOLIO_STREAM_BUFFER_TOTAL_BYTES; default 268435456)")
	maxStreams := fs.String("max-streams", "", "events and subscribe streams open at once; one more is refused with 429 RESOURCE_EXHAUSTED (env FOLIO_MAX_STREAMS; default 1000)")
	pprofAddr := fs.String("pprof-addr", "", "serve Go's profiler (net/http/pprof) on this address, such as 127.0.0.1:6060; keep it on loopback (env FOLIO_PPROF_ADDR; default off)")
	acquireTimeout := fs.String("acquire-timeout", "", "how long a request waits for a PostgreSQL connection, or a read for its slot, before it answers 503 UNAVAILABLE (env FOLIO_ACQUIRE_TIMEOUT; default 2s)")
	maxOpenTx := fs.String("max-open-transactions", "", "interactive transactions open at once on this node; a begin beyond it answers 503 UNAVAILABLE; -1: unlimited (env FOLIO_MAX_OPEN_TRANSACTIONS; default a quarter of the PostgreSQL pool, unlimited on pebble)")
	maxReads := fs.String("max-concurrent-reads", "", "reads streaming at once outside transactions; one beyond it waits up to the acquire timeout, then answers 503 UNAVAILABLE; -1: unlimited (env FOLIO_MAX_CONCURRENT_READS; default half the PostgreSQL pool, unlimited on pebble)")
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
	pick := func(dst *string, flagValue, env string) {
		if v := os.Getenv(env); v != "" {
			*dst = v
		}
		if flagValue != "" {
			*dst = flagValue
		}
	}
	pick(&cfg.Addr, *addr, "FOLIO_ADDR")
	pick(&cfg.DataDir, *dataDir, "FOLIO_DATA_DIR")
	pick(&cfg.Engine, *engine, "FOLIO_ENGINE")
	mib := ""
	if *cacheMiB > 0 {
		mib = strconv.FormatInt(*cacheMiB, 10)
	}
	pick(&mib, mib, "FOLIO_CACHE_MIB")
	if mib != "" {
		n, err := strconv.ParseInt(mib, 10, 64)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("cache size %q: want a positive number of MiB", mib)
		}
		cfg.CacheBytes = n << 20
	}
	pick(&cfg.PostgresURL, *pgURL, "FOLIO_POSTGRES_URL")
	pick(&cfg.LogLevel, *logLevel, "FOLIO_LOG_LEVEL")
	pick(&cfg.LogFormat, *logFormat, "FOLIO_LOG_FORMAT")
	pick(&cfg.Origin, *origin, "FOLIO_NODE_ID")
	pick(&cfg.PprofAddr, *pprofAddr, "FOLIO_PPROF_ADDR")
	origins := ""
	pick(&origins, *corsOrigins, "FOLIO_CORS_ORIGINS")
	if origins != "" {
		cfg.CORSOrigins = nil
		for _, o := range strings.Split(origins, ",") {
			if o = strings.TrimSpace(o); o != "" {
				cfg.CORSOrigins = append(cfg.CORSOrigins, o)
			}
		}
	}
	for _, d := range []struct {
		dst       *duration
		flag, env string
		what      string
	}{
		{&cfg.MaxTxAge, *maxTxAge, "FOLIO_MAX_TX_AGE", "max tx age"},
		{&cfg.TxIdle, *txIdle, "FOLIO_TX_IDLE_TIMEOUT", "tx idle timeout"},
		{&cfg.LogRetention, *logRetention, "FOLIO_LOG_RETENTION", "log retention"},
		{&cfg.LogMaxHold, *logMaxHold, "FOLIO_LOG_MAX_HOLD", "log max hold"},
		{&cfg.BodyTimeout, *bodyTimeout, "FOLIO_BODY_TIMEOUT", "body timeout"},
		{&cfg.WriteTimeout, *writeTimeout, "FOLIO_WRITE_TIMEOUT", "write timeout"},
		{&cfg.AcquireTimeout, *acquireTimeout, "FOLIO_ACQUIRE_TIMEOUT", "acquire timeout"},
		{&cfg.RequestTimeout, *requestTimeout, "FOLIO_REQUEST_TIMEOUT", "request timeout"},
	} {
		v := ""
		pick(&v, d.flag, d.env)
		if v != "" {
			if err := d.dst.Set(v); err != nil {
				return cfg, fmt.Errorf("%s: %w", d.what, err)
			}
		}
	}
	for _, n := range []struct {
		dst             *int
		flag, env, what string
	}{
		{&cfg.MaxOpenTx, *maxOpenTx, "FOLIO_MAX_OPEN_TRANSACTIONS", "max open transactions"},
		{&cfg.MaxReads, *maxReads, "FOLIO_MAX_CONCURRENT_READS", "max concurrent reads"},
	} {
		v := ""
		pick(&v, n.flag, n.env)
		if v != "" {
			x, err := strconv.Atoi(v)
			if err != nil {
				return cfg, fmt.Errorf("%s: %w", n.what, err)
			}
			*n.dst = x
		}
	}
	v := ""
	pick(&v, *streamBuffer, "FOLIO_STREAM_BUFFER_BYTES")
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cfg, fmt.Errorf("stream buffer bytes: %w", err)
		}
		cfg.StreamBuffer = n
	}
	v = ""
	pick(&v, *maxConns, "FOLIO_MAX_CONNECTIONS")
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("max connections %q: want a positive number", v)
		}
		cfg.MaxConnections = n
	}
	v = ""
	pick(&v, *streamBufferTotal, "FOLIO_STREAM_BUFFER_TOTAL_BYTES")
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return cfg, fmt.Errorf("stream buffer total bytes: %w", err)
		}
		cfg.StreamBufferTotal = n
	}
	v = ""
	pick(&v, *maxStreams, "FOLIO_MAX_STREAMS")
	if v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cfg, fmt.Errorf("max streams: %w", err)
		}
		cfg.MaxStreams = n
	}
	if cfg.LogMaxHold < 0 {
		return cfg, fmt.Errorf("log max hold %v: must not be negative", time.Duration(cfg.LogMaxHold))
	}
	if cfg.LogRetention < 0 {
		return cfg, fmt.Errorf("log retention %v: must not be negative", time.Duration(cfg.LogRetention))
	}
	if cfg.AcquireTimeout < 0 {
		return cfg, fmt.Errorf("acquire timeout %v: must not be negative", time.Duration(cfg.AcquireTimeout))
	}
	if cfg.RequestTimeout <= 0 {
		return cfg, fmt.Errorf("request timeout %v: must be positive", time.Duration(cfg.RequestTimeout))
	}
	if cfg.StreamBuffer <= 0 {
		return cfg, fmt.Errorf("stream buffer bytes %d: must be positive", cfg.StreamBuffer)
	}
	if cfg.StreamBufferTotal <= 0 {
		return cfg, fmt.Errorf("stream buffer total bytes %d: must be positive", cfg.StreamBufferTotal)
	}
	if cfg.MaxStreams <= 0 {
		return cfg, fmt.Errorf("max streams %d: must be positive", cfg.MaxStreams)
	}
	return cfg, nil
}

func newLogger(cfg serveConfig) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", cfg.LogLevel, err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch cfg.LogFormat {
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", cfg.LogFormat)
}

func serve(args []string) error {
	cfg, err := loadConfig(args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	log, err := newLogger(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return node.Run(ctx, node.Config{
		Engine:                 cfg.Engine,
		DataDir:                cfg.DataDir,
		PostgresURL:            cfg.PostgresURL,
		CacheBytes:             cfg.CacheBytes,
		MaxTxAge:               time.Duration(cfg.MaxTxAge),
		AcquireTimeout:         time.Duration(cfg.AcquireTimeout),
		MaxConcurrentReads:     cfg.MaxReads,
		Addr:                   cfg.Addr,
		PprofAddr:              cfg.PprofAddr,
		CORSOrigins:            cfg.CORSOrigins,
		Logger:                 log,
		Version:                version,
		MaxBodyBytes:           cfg.MaxBodyBytes,
		MaxDocumentsPerRequest: cfg.MaxDocuments,
		Sessions:               session.Options{Origin: cfg.Origin, IdleTimeout: time.Duration(cfg.TxIdle), MaxOpen: cfg.MaxOpenTx},
		Streams:                streams.Options{MaxPending: cfg.StreamBuffer, MaxPendingTotal: cfg.StreamBufferTotal, MaxStreams: cfg.MaxStreams},
		LogRetention:           time.Duration(cfg.LogRetention),
		LogMaxHold:             time.Duration(cfg.LogMaxHold),
		ShutdownTimeout:        time.Duration(cfg.ShutdownWait),
		MaxConnections:         cfg.MaxConnections,
		BodyTimeout:            time.Duration(cfg.BodyTimeout),
		WriteTimeout:           time.Duration(cfg.WriteTimeout),
		RequestTimeout:         time.Duration(cfg.RequestTimeout),
	})
}
