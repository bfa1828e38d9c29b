package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/foliodb/folio/internal/node"
)

// `folio serve` binds its settings (flags, the environment, the config
// file) onto node.Config, starting from node.DefaultConfig: the node owns
// the configuration and its defaults, serve only reads it in.

// setting is one configuration setting: its flag, its environment variable
// and its key in the config file (the flag and the variable are empty for a
// setting of the file alone), and the field of node.Config it sets.
type setting struct {
	flag, env, key string
	usage          string
	def            string // the default, as the usage shows it
	field          func(c *node.Config) value
}

// name is the setting's name in messages: its flag, or its file key.
func (s setting) name() string {
	if s.flag != "" {
		return "--" + s.flag
	}
	return s.key
}

// value is a field of node.Config as a setting reads and shows it.
type value interface {
	// setText reads a flag's or an environment variable's text.
	setText(string) error
	// setJSON reads the config file's value.
	setJSON(json.RawMessage) error
	// String shows the value as the config file writes it.
	String() string
}

// switches are the settings whose flag may stand alone (--auth means
// --auth=true), as boolean flags do.
var switches = map[string]bool{"auth": true, "log-requests": true, "console": true}

// settings lists every setting `folio serve` takes from flags and the
// environment: one row each, so that a new one cannot miss a place.
func settings() []setting {
	return []setting{
		{"addr", "FOLIO_ADDR", "addr", "address to listen on (HTTP/1.1, HTTP/2 without TLS and gRPC); :8081 listens on every interface", "localhost:8081", func(c *node.Config) value { return text(&c.Addr) }},
		{"grpc-addr", "FOLIO_GRPC_ADDR", "grpc_addr", "also serve the gRPC API alone on this address, with gRPC's own transport", "off", func(c *node.Config) value { return text(&c.GRPCAddr) }},
		{"engine", "FOLIO_ENGINE", "engine", "storage engine: pebble (embedded) or postgres", "pebble", func(c *node.Config) value { return text(&c.Engine) }},
		{"postgres-url", "FOLIO_POSTGRES_URL", "postgres_url", "PostgreSQL connection URL for --engine postgres", "none", func(c *node.Config) value { return secret(&c.Postgres.URL) }},
		{"data-dir", "FOLIO_DATA_DIR", "data_dir", "directory of the embedded store, and of the search indexes unless --search-dir says otherwise", "./data", func(c *node.Config) value { return text(&c.DataDir) }},
		{"backup-dir", "FOLIO_BACKUP_DIR", "backup_dir", "directory the backup call (folio backup --url) writes under: a backup's --to names a directory in it; without it the call is refused", "off", func(c *node.Config) value { return text(&c.Ops.BackupDir) }},
		{"search-dir", "FOLIO_SEARCH_DIR", "search_dir", "directory of the search indexes, one per collection, rebuilt from the documents if removed", "<data-dir>/search", func(c *node.Config) value { return text(&c.Search.Dir) }},
		{"search-wait", "FOLIO_SEARCH_WAIT", "search_wait", "how long a search waits for the index to catch up with the writes acknowledged before it, then answers 503 UNAVAILABLE", "5s", func(c *node.Config) value { return dur(&c.Ops.SearchWait) }},
		{"cache-mib", "FOLIO_CACHE_MIB", "cache_bytes", "embedded engine's caches in MiB: a quarter for documents read, the rest for Pebble's block cache", "128", func(c *node.Config) value { return mebibytes(&c.Pebble.CacheSize) }},
		{"compression", "FOLIO_COMPRESSION", "compression", "embedded engine's table compression: snappy (fastest) or zstd (about a third less disk for text, fewer writes a second where CPU is short)", "snappy", func(c *node.Config) value { return text(&c.Pebble.Compression) }},
		{"log-level", "FOLIO_LOG_LEVEL", "log_level", "debug, info, warn or error", "info", func(c *node.Config) value { return text(&c.Log.Level) }},
		{"log-format", "FOLIO_LOG_FORMAT", "log_format", "text or json", "text", func(c *node.Config) value { return text(&c.Log.Format) }},
		{"log-requests", "FOLIO_LOG_REQUESTS", "log_requests", "log every request at info level (--log-requests, or true or false); failed ones are logged whatever this says", "false", func(c *node.Config) value { return boolean(&c.Ops.LogRequests) }},
		{"slow-request", "FOLIO_SLOW_REQUEST", "slow_request", "log a request that takes longer than this at warn level, with the query plans it ran; 0 logs none as slow", "1s", func(c *node.Config) value { return dur(&c.Ops.SlowRequest) }},
		{"max-tx-age", "FOLIO_MAX_TX_AGE", "max_tx_age", "longest a transaction may stay open", "10m", func(c *node.Config) value { return dur(&c.MaxTxAge) }},
		{"tx-idle-timeout", "FOLIO_TX_IDLE_TIMEOUT", "tx_idle_timeout", "an interactive transaction with no request for this long is rolled back", "2m", func(c *node.Config) value { return dur(&c.Sessions.IdleTimeout) }},
		{"node-id", "FOLIO_NODE_ID", "node_id", "this node's identity in transaction contexts, unique among the nodes on one PostgreSQL database", "<host name>-<port>", func(c *node.Config) value { return text(&c.Sessions.Origin) }},
		{"advertise-addr", "FOLIO_ADVERTISE_ADDR", "advertise_addr", "host:port where the other nodes on the same PostgreSQL database reach this one, to forward it the requests of its transactions", "the listen address (the host name for one on every interface)", func(c *node.Config) value { return text(&c.AdvertiseAddr) }},
		{"node-lease", "FOLIO_NODE_LEASE", "node_lease", "how long this node's registration among the nodes on one PostgreSQL database lasts unless renewed: the others know it gone, and its id free, within it", "10s", func(c *node.Config) value { return dur(&c.Cluster.Lease) }},
		{"log-retention", "FOLIO_LOG_RETENTION", "log_retention", "how long the change log keeps a commit, and so how far back events and subscribe streams can resume; 0 keeps it forever", "24h", func(c *node.Config) value { return dur(&c.ChangeLog.Retention) }},
		{"log-retention-mib", "FOLIO_LOG_RETENTION_MIB", "log_retention_bytes", "most the change log may take, in MiB (its records as stored): past it the oldest changes go, whatever --log-retention says, and streams that had not read them are cut off; 0: no bound", "128", func(c *node.Config) value { return mibOrNone(&c.ChangeLog.MaxBytes) }},
		{"log-max-hold", "FOLIO_LOG_MAX_HOLD", "log_max_hold", "how much longer than the retention a stream catching up may keep the log from being trimmed before it is cut off and must resync", "the retention", func(c *node.Config) value { return dur(&c.ChangeLog.MaxHold) }},
		{"request-timeout", "FOLIO_REQUEST_TIMEOUT", "request_timeout", "longest a request may run, a read's streaming included, before it fails with DEADLINE_EXCEEDED and its writes are dropped; events and subscribe streams have none", "30s", func(c *node.Config) value { return dur(&c.Ops.RequestTimeout) }},
		{"max-connections", "FOLIO_MAX_CONNECTIONS", "max_connections", "most connections open at once; past it new ones wait", "4096", func(c *node.Config) value { return number(&c.MaxConnections) }},
		{"body-timeout", "FOLIO_BODY_TIMEOUT", "body_timeout", "how long a request body may take to arrive", "30s", func(c *node.Config) value { return dur(&c.BodyTimeout) }},
		{"write-timeout", "FOLIO_WRITE_TIMEOUT", "write_timeout", "how long a write of a response or stream may wait for the client to read", "30s", func(c *node.Config) value { return dur(&c.WriteTimeout) }},
		{"http1-server", "FOLIO_HTTP1_SERVER", "http1_server", "server of HTTP/1.1 connections: fasthttp (built for cost per request) or net/http (Go's own); HTTP/2 and gRPC are served the same with either", "fasthttp", func(c *node.Config) value { return text(&c.HTTP1Server) }},
		{"console", "FOLIO_CONSOLE", "console", "serve the web console at /console/ on the API's port, and redirect / there (--console=false, or false in the config file, turns it off)", "true", func(c *node.Config) value { return boolean(&c.Console) }},
		{"stream-buffer-bytes", "FOLIO_STREAM_BUFFER_BYTES", "stream_buffer_bytes", "bytes of changes an events or subscribe stream may have waiting before it is ended as too slow", "16777216", func(c *node.Config) value { return number(&c.Streams.MaxPending) }},
		{"stream-buffer-total-bytes", "FOLIO_STREAM_BUFFER_TOTAL_BYTES", "stream_buffer_total_bytes", "bytes of changes all the events and subscribe streams together may have waiting; past it the stream furthest behind is ended", "268435456", func(c *node.Config) value { return number(&c.Streams.MaxPendingTotal) }},
		{"max-streams", "FOLIO_MAX_STREAMS", "max_streams", "events and subscribe streams open at once; one more is refused with 429 RESOURCE_EXHAUSTED", "1000", func(c *node.Config) value { return number(&c.Streams.MaxStreams) }},
		{"acquire-timeout", "FOLIO_ACQUIRE_TIMEOUT", "acquire_timeout", "how long a request waits for a PostgreSQL connection, or a read for its slot, before it answers 503 UNAVAILABLE", "2s", func(c *node.Config) value { return dur(&c.AcquireTimeout) }},
		{"max-open-transactions", "FOLIO_MAX_OPEN_TRANSACTIONS", "max_open_transactions", "interactive transactions open at once on this node; a begin beyond it answers 503 UNAVAILABLE; -1: unlimited", "a quarter of the PostgreSQL pool, unlimited on pebble", func(c *node.Config) value { return number(&c.Sessions.MaxOpen) }},
		{"max-concurrent-reads", "FOLIO_MAX_CONCURRENT_READS", "max_concurrent_reads", "reads streaming at once outside transactions; one beyond it waits up to the acquire timeout, then answers 503 UNAVAILABLE; -1: unlimited", "half the PostgreSQL pool, unlimited on pebble", func(c *node.Config) value { return number(&c.Ops.MaxConcurrentReads) }},
		{"cors-origins", "FOLIO_CORS_ORIGINS", "cors_origins", "comma-separated origins whose browser pages may call the API, or * for any", "none: cross-origin calls stay off", func(c *node.Config) value { return list(&c.CORSOrigins) }},
		{"allowed-hosts", "FOLIO_ALLOWED_HOSTS", "allowed_hosts", "comma-separated host names clients reach the API by, besides IP addresses, localhost and the hosts of --addr and --advertise-addr, or * for any; once set, a request that names another host in its Host header is refused, as it always is on a server that listens on loopback only (DNS rebinding)", "none: the names above", func(c *node.Config) value { return list(&c.AllowedHosts) }},
		{"auth", "FOLIO_AUTH", "auth", "require an access token on every call but health, info and the token endpoint (--auth, or true or false)", "false", func(c *node.Config) value { return boolean(&c.Auth) }},
		{"owner-file", "FOLIO_OWNER_FILE", "owner_file", "file of the owner application's credentials: read at the first start with --auth if it exists (to choose them), written there otherwise", "<data-dir>/owner.json", func(c *node.Config) value { return text(&c.OwnerFile) }},
		{"token-ttl", "FOLIO_TOKEN_TTL", "token_ttl", "how long an access token is valid", "1h", func(c *node.Config) value { return dur(&c.Tokens.AccessTTL) }},
		{"refresh-token-ttl", "FOLIO_REFRESH_TOKEN_TTL", "refresh_token_ttl", "how long a refresh token is valid", "24h", func(c *node.Config) value { return dur(&c.Tokens.RefreshTTL) }},
		{"token-audience", "FOLIO_TOKEN_AUDIENCE", "token_audience", "the audience tokens are issued for and must name; nodes that share a store share it", "folio", func(c *node.Config) value { return text(&c.Tokens.Audience) }},
		{"tls-cert", "FOLIO_TLS_CERT", "tls_cert", "PEM certificate (chain) to serve the API over TLS with; needs --tls-key", "off", func(c *node.Config) value { return text(&c.TLSCert) }},
		{"tls-key", "FOLIO_TLS_KEY", "tls_key", "PEM private key of --tls-cert", "off", func(c *node.Config) value { return text(&c.TLSKey) }},
		{"metrics-addr", "FOLIO_METRICS_ADDR", "metrics_addr", "serve the Prometheus metrics (/metrics) on this address instead of on the API's port", "the API's port", func(c *node.Config) value { return text(&c.MetricsAddr) }},
		{"gc-percent", "FOLIO_GC_PERCENT", "gc_percent", "Go garbage collector's target (GOGC): the heap grows to 1+N/100 times what is live before a collection; the GOGC environment variable, if set, wins; -1 turns the collector off", "400", func(c *node.Config) value { return number(&c.GCPercent) }},
		{"pprof-addr", "FOLIO_PPROF_ADDR", "pprof_addr", "serve Go's profiler (net/http/pprof) on this address, such as 127.0.0.1:6060; keep it on loopback", "off", func(c *node.Config) value { return text(&c.PprofAddr) }},
		// Settings of the config file alone.
		{"", "", "max_body_bytes", "largest request body in bytes, over HTTP and gRPC", "16777216", func(c *node.Config) value { return number(&c.MaxBodyBytes) }},
		{"", "", "max_documents_per_request", "most documents of one insert or replace, messages of one publish", "10000", func(c *node.Config) value { return number(&c.Ops.MaxDocumentsPerRequest) }},
		{"", "", "max_aggregate_groups", "most groups one aggregation holds in memory; past it the call is refused", "100000", func(c *node.Config) value { return number(&c.Ops.MaxAggregateGroups) }},
		{"", "", "shutdown_timeout", "how long a shutdown waits for the requests in flight", "30s", func(c *node.Config) value { return dur(&c.ShutdownTimeout) }},
	}
}

type textValue struct{ p *string }

func text(p *string) value                          { return textValue{p} }
func (v textValue) setText(s string) error          { *v.p = s; return nil }
func (v textValue) setJSON(b json.RawMessage) error { return json.Unmarshal(b, v.p) }
func (v textValue) String() string                  { return *v.p }

// secretValue is text that may hold a password (a connection URL's), which
// String leaves out.
type secretValue struct{ textValue }

func secret(p *string) value { return secretValue{textValue{p}} }
func (v secretValue) String() string {
	u, err := url.Parse(*v.p)
	if err != nil || u.User == nil {
		if strings.Contains(*v.p, "password=") {
			return "(set; it names a password)"
		}
		return *v.p
	}
	return u.Redacted()
}

type durValue struct{ p *time.Duration }

func dur(p *time.Duration) value { return durValue{p} }
func (v durValue) setText(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}
func (v durValue) setJSON(b json.RawMessage) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"10m\": %w", err)
	}
	return v.setText(s)
}
func (v durValue) String() string { return v.p.String() }

type boolValue struct{ p *bool }

func boolean(p *bool) value { return boolValue{p} }
func (v boolValue) setText(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q: want true or false", s)
	}
	*v.p = b
	return nil
}
func (v boolValue) setJSON(b json.RawMessage) error { return json.Unmarshal(b, v.p) }
func (v boolValue) String() string                  { return strconv.FormatBool(*v.p) }

type numberValue[T int | int64] struct{ p *T }

func number[T int | int64](p *T) value { return numberValue[T]{p} }
func (v numberValue[T]) setText(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("%q is not a whole number", s)
	}
	*v.p = T(n)
	return nil
}
func (v numberValue[T]) setJSON(b json.RawMessage) error { return json.Unmarshal(b, v.p) }
func (v numberValue[T]) String() string                  { return strconv.FormatInt(int64(*v.p), 10) }

// mibValue is a size in bytes that flags and the environment give in MiB
// (the file in bytes); zero allows 0, meaning no bound.
type mibValue struct {
	p    *int64
	zero bool
}

func mebibytes(p *int64) value { return mibValue{p, false} }
func mibOrNone(p *int64) value { return mibValue{p, true} }
func (v mibValue) setText(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case v.zero && (err != nil || n < 0 || n > 1<<43):
		return fmt.Errorf("%q: want a number of MiB, 0 for none", s)
	case !v.zero && (err != nil || n <= 0):
		return fmt.Errorf("%q: want a positive number of MiB", s)
	}
	*v.p = n << 20
	return nil
}
func (v mibValue) setJSON(b json.RawMessage) error { return json.Unmarshal(b, v.p) }
func (v mibValue) String() string                  { return strconv.FormatInt(*v.p, 10) }

// listValue is a list, written comma-separated in flags and the
// environment and as an array in the file.
type listValue struct{ p *[]string }

func list(p *[]string) value { return listValue{p} }
func (v listValue) setText(s string) error {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	*v.p = out
	return nil
}
func (v listValue) setJSON(b json.RawMessage) error { return json.Unmarshal(b, v.p) }
func (v listValue) String() string                  { return strings.Join(*v.p, ",") }

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

// Where a setting's value came from, as --print-config shows it.
const (
	fromDefault = "default"
	fromFile    = "file"
	fromEnv     = "env"
	fromFlag    = "flag"
)

// loaded is a configuration read in: the node's, where each setting came
// from (by file key), and whether to print it rather than serve.
type loaded struct {
	node.Config
	from  map[string]string
	print bool
}

// loadConfig reads the configuration from serve's arguments, the
// environment and the config file.
func loadConfig(args []string) (loaded, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	resolve := serveFlags(fs)
	if err := fs.Parse(args); err != nil {
		return loaded{}, err
	}
	return resolve()
}

// serveFlags declares serve's flags, and returns what resolves them,
// once parsed, with the environment and the config file into the node's
// configuration.
func serveFlags(fs *flag.FlagSet) func() (loaded, error) {
	l := loaded{Config: node.DefaultConfig(), from: map[string]string{}}
	configFile := fs.String("config", os.Getenv("FOLIO_CONFIG"), "JSON config file; its keys are the flags' names with _ for - (env FOLIO_CONFIG)")
	fs.BoolVar(&l.print, "print-config", false, "print the effective configuration, and where each setting came from, then exit")
	all := settings()
	flags := make([]*string, len(all))
	for i, s := range all {
		l.from[s.key] = fromDefault
		if s.flag == "" {
			continue
		}
		usage := fmt.Sprintf("%s (env %s; default %s)", s.usage, s.env, s.def)
		if switches[s.flag] {
			flags[i] = new(string)
			fs.Var(switchFlag{flags[i]}, s.flag, usage)
			continue
		}
		flags[i] = fs.String(s.flag, "", usage)
	}
	return func() (loaded, error) {
		if *configFile != "" {
			if err := l.readFile(*configFile, all); err != nil {
				return l, err
			}
		}
		// The environment beats the file, and a flag beats both.
		for i, s := range all {
			if s.flag == "" {
				continue
			}
			v, from := os.Getenv(s.env), fromEnv
			if *flags[i] != "" {
				v, from = *flags[i], fromFlag
			}
			if v == "" {
				continue
			}
			if err := s.field(&l.Config).setText(v); err != nil {
				return l, fmt.Errorf("--%s: %w", s.flag, err)
			}
			l.from[s.key] = from
		}
		return l, check(l.Config)
	}
}

// readFile reads the config file: a JSON object of settings by key.
// Unknown keys are refused.
func (l *loaded) readFile(file string, all []setting) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("config file %s: %w", file, err)
	}
	byKey := make(map[string]setting, len(all))
	for _, s := range all {
		byKey[s.key] = s
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s, ok := byKey[k]
		if !ok {
			return fmt.Errorf("config file %s: unknown setting %q", file, k)
		}
		if err := s.field(&l.Config).setJSON(raw[k]); err != nil {
			return fmt.Errorf("config file %s: %s: %w", file, k, err)
		}
		l.from[k] = fromFile
	}
	return nil
}

// check refuses settings out of their range.
func check(c node.Config) error {
	for _, d := range []struct {
		name     string
		v        time.Duration
		positive bool
	}{
		{"log-max-hold", c.ChangeLog.MaxHold, false},
		{"log-retention", c.ChangeLog.Retention, false},
		{"acquire-timeout", c.AcquireTimeout, false},
		{"body-timeout", c.BodyTimeout, false},
		{"write-timeout", c.WriteTimeout, false},
		{"request-timeout", c.Ops.RequestTimeout, true},
		{"token-ttl", c.Tokens.AccessTTL, false},
		{"refresh-token-ttl", c.Tokens.RefreshTTL, false},
		{"slow-request", c.Ops.SlowRequest, false},
		{"node-lease", c.Cluster.Lease, false},
	} {
		if d.v < 0 || (d.positive && d.v == 0) {
			return fmt.Errorf("--%s %v: must be %s", d.name, d.v, map[bool]string{true: "positive", false: "zero or more"}[d.positive])
		}
	}
	for _, n := range []struct {
		name string
		v    int64
	}{
		{"stream-buffer-bytes", int64(c.Streams.MaxPending)},
		{"stream-buffer-total-bytes", c.Streams.MaxPendingTotal},
		{"max-streams", int64(c.Streams.MaxStreams)},
	} {
		if n.v <= 0 {
			return fmt.Errorf("--%s %d: must be positive", n.name, n.v)
		}
	}
	if c.ChangeLog.MaxBytes < 0 {
		return fmt.Errorf("log_retention_bytes %d: must be zero or more", c.ChangeLog.MaxBytes)
	}
	if c.MaxConnections < 0 {
		return fmt.Errorf("--max-connections %d: must be positive", c.MaxConnections)
	}
	if c.GCPercent < -1 {
		return fmt.Errorf("--gc-percent %d: must be zero or more, or -1 to turn the collector off", c.GCPercent)
	}
	return nil
}

// printConfig writes every setting by its file key, its value as the file
// would give it (passwords left out) and where it came from.
func printConfig(w io.Writer, l loaded) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tVALUE\tFROM")
	for _, s := range settings() {
		v := s.field(&l.Config).String()
		if v == "" {
			v = "(" + s.def + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.key, v, l.from[s.key])
	}
	return tw.Flush()
}

// serveCommand is `folio serve`: it runs until the process is asked to
// stop.
func serveCommand(fs *flag.FlagSet) runFunc {
	resolve := serveFlags(fs)
	return func(s *invocation, _ []string) error {
		l, err := resolve()
		if err != nil {
			return err
		}
		if l.print {
			return printConfig(s.out.w, l)
		}
		cfg := l.Config
		if cfg.Logger, err = node.NewLogger(cfg.Log, os.Stderr); err != nil {
			return err
		}
		cfg.Version = version
		return node.Run(s.ctx, cfg)
	}
}
