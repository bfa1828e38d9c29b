// Package node runs one Folio server: it opens the store and starts, in
// order, every long-running part over it (interactive transactions, the
// change-log readers behind the streams, the log trimmer, the search
// indexer, the operations, and the transports: HTTP and gRPC on the API's
// port, split by protocol, and gRPC alone on a second port if configured),
// and stops them in the reverse order. `folio serve`
// parses its configuration and calls Run; the black-box tests start nodes
// the same way.
//
// Shutdown, in order:
//
//  1. the transports stop accepting; the streams (events, subscribe) end,
//     each with an error (a line over HTTP, the call's status over gRPC)
//     that tells its client to resume (they never end by themselves), and
//     the change-log reader that fed them stops;
//  2. the requests and calls in flight finish, up to ShutdownTimeout, after
//     which they are cut off (HTTP's Shutdown and gRPC's GracefulStop run
//     together, then Close and Stop); a stream still catching up closes
//     its own change-log reader as its request ends, so none is left but
//     the search indexer's (the step's log line counts them);
//  3. the interactive transactions still open are rolled back;
//  4. the change-log trimmer stops;
//  5. the search indexer stops: it closes its indexes, which persist what
//     they hold with their watermarks (it reads the store, so it stops
//     before the store closes);
//  6. the store closes, after its in-flight commits.
//
// Each step is logged at info level as it completes.
package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/cluster"
	"github.com/foliodb/folio/internal/grpcapi"
	"github.com/foliodb/folio/internal/httpapi"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/kv/pebblekv"
	"github.com/foliodb/folio/internal/kv/sqlkv"
	"github.com/foliodb/folio/internal/metrics"
	"github.com/foliodb/folio/internal/ops"
	"github.com/foliodb/folio/internal/search"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/internal/streams"
)

// Config is a node's configuration. Zero values take the defaults.
type Config struct {
	// Store, if set, is the store to run on; the node closes it at
	// shutdown. Otherwise the node opens the one Engine names.
	Store kv.Store
	// Engine is "pebble" (embedded, in DataDir) or "postgres" (at
	// PostgresURL).
	Engine      string
	DataDir     string
	PostgresURL string
	// SearchDir holds the search indexes, one directory per collection.
	// Default: <DataDir>/search when the node opens its store itself (for
	// either engine); with a Store given and no SearchDir, the indexes
	// are kept in memory and rebuilt at every start.
	SearchDir string
	// SearchWait bounds how long a search waits for the index to catch
	// up with the writes acknowledged before it. Default 5s.
	SearchWait time.Duration
	// CacheBytes is the embedded engine's block cache.
	CacheBytes int64
	// Compression is the embedded engine's table compression: "snappy"
	// (default) or "zstd".
	Compression string
	// MaxTxAge is the longest a transaction may stay open, interactive
	// ones included.
	MaxTxAge time.Duration
	// AcquireTimeout bounds how long a request waits for a connection to
	// PostgreSQL, or a read for its slot (MaxConcurrentReads), before it is
	// answered 503 UNAVAILABLE. Default 2s.
	AcquireTimeout time.Duration
	// MaxConcurrentReads bounds the reads (documents/read, messages/read)
	// streaming at once outside interactive transactions: each holds a
	// storage connection while its client receives it. 0 takes the
	// default: half the pool on a store with a connection pool
	// (PostgreSQL), unlimited on the embedded store. Negative: unlimited.
	MaxConcurrentReads int

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
	// wait. Default 4096.
	MaxConnections int
	// BodyTimeout bounds how long a request body may take to arrive;
	// WriteTimeout how long a write of a response may wait for its client.
	// Default 30s each.
	BodyTimeout, WriteTimeout time.Duration

	Logger  *slog.Logger
	Version string
	// LogRequests logs every request at info level (failed ones are
	// always logged). SlowRequest is the duration past which a request is
	// logged at warn level with its query plans; 0 takes the default (1s),
	// negative logs none as slow.
	LogRequests bool
	SlowRequest time.Duration

	// MaxBodyBytes bounds a request body; MaxDocumentsPerRequest the
	// documents of one insert or replace (and messages of one publish).
	MaxBodyBytes           int64
	MaxDocumentsPerRequest int
	// RequestTimeout bounds every request but the streams (see
	// ops.Config.RequestTimeout). Default 30s.
	RequestTimeout time.Duration
	// Sessions configures interactive transactions (origin, idle timeout,
	// maximum lifetime; the lifetime defaults to MaxTxAge). Its MaxOpen
	// left at 0 takes the default: on a store with a connection pool
	// (PostgreSQL), a quarter of the pool, so that open transactions never
	// hold every connection; unlimited on the embedded store. Negative:
	// unlimited.
	Sessions session.Options
	// Streams configures the events and subscribe streams: how many may
	// be open at once, and the bytes queued for each and for all.
	Streams streams.Options
	// LogRetention is how long the change log keeps a commit; 0 keeps it
	// forever. LogMaxHold is how much longer a log reader that has not read
	// a commit yet (a stream catching up) may keep it before it is cut off
	// and must resync; default: the retention.
	LogRetention, LogMaxHold time.Duration
	// LogMaxBytes bounds what the change log's entries take; past it the
	// oldest go whatever the retention, and readers that had not read
	// them are cut off. 0: no bound.
	LogMaxBytes int64
	// ShutdownTimeout bounds how long a shutdown waits for requests in
	// flight. Default 30s.
	ShutdownTimeout time.Duration
	// BackupDir is the directory the backup call writes under; empty turns
	// the call off.
	BackupDir string

	// Auth makes every call but health, info and the token endpoint need
	// an access token (docs/operations.md). OwnerFile holds the owner
	// application's credentials: read at the first start with Auth if it
	// exists, written there otherwise. Default <DataDir>/owner.json.
	Auth      bool
	OwnerFile string
	// Tokens configures tokens: lifetimes, audience, the limit on failed
	// requests.
	Tokens auth.Config
	// TLSCert and TLSKey, both set, serve the API's port (and GRPCAddr's)
	// over TLS only: HTTPS, HTTP/2 and gRPC.
	TLSCert, TLSKey string
	// AdvertiseAddr is where the other nodes on the same PostgreSQL
	// database reach this one's API (host:port), to forward it the
	// requests of its transactions. Default: the API's listen address,
	// with the host name for an address that listens on every interface.
	AdvertiseAddr string
	// NodeLease is how long this node's registration lasts unless renewed
	// (cluster.DefaultLease if zero): the other nodes know it gone, and its
	// id free, within it.
	NodeLease time.Duration
}

// Defaults of Config.
const (
	DefaultSlowRequest     = time.Second
	DefaultShutdownTimeout = 30 * time.Second
	DefaultMaxConnections  = 4096
)

// Node is a running server.
type Node struct {
	cfg Config
	log *slog.Logger

	store     kv.Store
	changeLog *changelog.Log
	sessions  *session.Manager
	hub       *streams.Hub
	trimmer   *background
	search    *search.Indexer
	upgrade   *catalog.Upgrade
	auth      *auth.Service
	// cluster registers the node among those on the same store, for
	// forwarding; nil on a store only one node can open (the embedded
	// one).
	cluster   *cluster.Registry
	forwarder *grpcapi.Forwarder
	tls       *tls.Config // nil without TLS
	ops       *ops.Ops
	http      *http.Server
	ln        net.Listener
	served    chan struct{} // closed when the HTTP server has returned
	serveErr  error         // what it returned
	// mux splits the API's port between the HTTP server and grpcShared;
	// grpcOwn, if GRPCAddr is set, serves gRPC on a listener of its own.
	mux            *protocolMux
	grpcShared     *grpcServing
	grpcOwn        *grpcServing
	endStreamsOnce sync.Once
	// streamsEnded is closed once a shutdown has ended the streams.
	streamsEnded chan struct{}
	pprof        *http.Server
	metrics      *metrics.Metrics
	metricsHTTP  *http.Server // MetricsAddr's server; nil without one
	metricsLn    net.Listener

	closeOnce sync.Once
	closeErr  error
}

// Start opens the store and starts every part; the API is served when it
// returns. On an error, whatever had started is stopped again.
func Start(ctx context.Context, cfg Config) (_ *Node, err error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = "./data"
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.BackupDir != "" {
		// Backups answer with their whole path, which a restore needs
		// whatever directory the server was started in.
		if cfg.BackupDir, err = filepath.Abs(cfg.BackupDir); err != nil {
			return nil, fmt.Errorf("backup directory: %w", err)
		}
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.SlowRequest == 0 {
		cfg.SlowRequest = DefaultSlowRequest
	}
	// The transports' limits are settled here, once, so that HTTP and
	// gRPC apply the same ones.
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = httpapi.DefaultMaxBodyBytes
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = httpapi.DefaultBodyTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = httpapi.DefaultWriteTimeout
	}
	if cfg.Sessions.Origin == "" {
		cfg.Sessions.Origin = defaultNodeID(cfg.Addr)
	}
	if cfg.Sessions.MaxLifetime <= 0 {
		// An interactive transaction lives as long as the store lets a
		// transaction stay open.
		cfg.Sessions.MaxLifetime = cfg.MaxTxAge
	}
	if cfg.Sessions.Logger == nil {
		cfg.Sessions.Logger = cfg.Logger
	}
	if cfg.Streams.Logger == nil {
		cfg.Streams.Logger = cfg.Logger
	}
	n := &Node{cfg: cfg, log: cfg.Logger, streamsEnded: make(chan struct{})}
	defer func() {
		if err != nil {
			n.stopHTTP() // a listener after the first failed to start
			n.stopParts()
		}
	}()

	if n.store = cfg.Store; n.store == nil {
		if n.store, err = openStore(ctx, cfg); err != nil {
			return nil, err
		}
	}
	n.shareConnections(&cfg)
	n.cfg = cfg
	n.upgrade = catalog.NewUpgrade(n.store, n.log)
	if err := n.upgrade.Ensure(ctx); err != nil {
		n.log.Warn("the store's catalog could not be brought up to date yet; requests will try again", "err", err)
	}
	if err := n.startAuth(ctx); err != nil {
		return nil, err
	}
	n.sessions = session.New(n.store, cfg.Sessions)
	n.changeLog = changelog.NewLog(n.store, changelog.Options{Retention: cfg.LogRetention, MaxHold: cfg.LogMaxHold, MaxBytes: cfg.LogMaxBytes, Logger: n.log})
	n.hub = streams.NewHub(n.changeLog, cfg.Streams)
	if cfg.LogRetention > 0 || cfg.LogMaxBytes > 0 {
		n.trimmer = startBackground(n.changeLog.RunTrimmer)
	}
	if err := n.startSearch(ctx); err != nil {
		return nil, err
	}
	if _, shared := n.store.(pooled); shared {
		n.cluster = cluster.New(n.store, cluster.Options{Lease: cfg.NodeLease, Logger: n.log})
	}
	n.metrics = metrics.New(cfg.Version, n.metricSources())
	n.ops = ops.New(ops.Config{Store: n.store, Observer: n.metrics, Sessions: n.sessions, Streams: n.hub, Search: n.search, SearchWait: cfg.SearchWait, ChangeLog: n.changeLog, Logger: n.log,
		Auth: n.auth, RequireAuth: cfg.Auth, Upgrade: n.upgrade,
		Version: cfg.Version, Engine: n.engineName(), MaxDocumentsPerRequest: cfg.MaxDocumentsPerRequest,
		MaxConcurrentReads: cfg.MaxConcurrentReads, ReadWait: cfg.AcquireTimeout, RequestTimeout: cfg.RequestTimeout,
		LogRequests: cfg.LogRequests, SlowRequest: max(cfg.SlowRequest, 0), Cluster: n.cluster, BackupDir: cfg.BackupDir})
	n.forwarder = grpcapi.NewForwarder(n.forwardTLS())
	// Joined before serving: a transaction begun here before the other
	// nodes can locate this one would look lost to them ("session is
	// gone"), and then held elsewhere once it joined.
	if err := n.listenHTTP(cfg.Addr); err != nil {
		return nil, err
	}
	if err := n.join(ctx); err != nil {
		n.ln.Close()
		return nil, err
	}
	n.serveHTTP()
	if cfg.GRPCAddr != "" {
		if err := n.serveGRPC(cfg.GRPCAddr); err != nil {
			return nil, err
		}
	}
	if cfg.PprofAddr != "" {
		if err := n.servePprof(cfg.PprofAddr); err != nil {
			return nil, err
		}
	}
	if cfg.MetricsAddr != "" {
		if err := n.serveMetrics(cfg.MetricsAddr); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// startAuth makes the authentication service and, with authentication on,
// the owner application if the store has none, and loads the TLS
// certificate if one is configured.
func (n *Node) startAuth(ctx context.Context) error {
	if (n.cfg.TLSCert == "") != (n.cfg.TLSKey == "") {
		return errors.New("TLS needs both a certificate (--tls-cert) and its key (--tls-key)")
	}
	if n.cfg.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(n.cfg.TLSCert, n.cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("TLS certificate: %w", err)
		}
		n.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
			// h2 first: gRPC clients need it, and HTTP clients that
			// offer it get HTTP/2.
			NextProtos: []string{"h2", "http/1.1"}}
	}
	tokens := n.cfg.Tokens
	if tokens.Logger == nil {
		tokens.Logger = n.log
	}
	n.auth = auth.New(n.store, tokens)
	if !n.cfg.Auth {
		return nil
	}
	if err := n.refuseAppsMadeWithoutAuth(ctx); err != nil {
		return err
	}
	file := n.cfg.OwnerFile
	if file == "" {
		file = filepath.Join(n.cfg.DataDir, "owner.json")
	}
	owner, err := n.auth.EnsureOwner(ctx, file)
	if err != nil {
		return err
	}
	if owner != nil {
		n.log.Warn("created the owner application: its id and secret are in the owner file; keep them safe, then delete the file", "file", file, "client_id", owner.ID)
	}
	n.log.Info("authentication on: calls need a bearer token", "token_ttl", n.auth.AccessTTL())
	return nil
}

// refuseAppsMadeWithoutAuth keeps a node from turning authentication on
// while applications made, changed or given their secret without it exist
// (auth.Service.MadeWithoutAuth): anyone who could reach the server then
// may have made them (an owner, even, which would also keep the owner file
// from being read), or raised the role of one whose secret they hold. The
// operator deletes them, or makes them again, knowingly.
func (n *Node) refuseAppsMadeWithoutAuth(ctx context.Context) error {
	apps, err := n.auth.MadeWithoutAuth(ctx)
	if err != nil {
		return fmt.Errorf("authentication: list the applications: %w", err)
	}
	if len(apps) == 0 {
		return nil
	}
	names := make([]string, len(apps))
	for i, a := range apps {
		names[i] = fmt.Sprintf("%s (%q, role %s, namespace %s)", a.ID, a.Name, a.Role, a.Namespace.Name)
	}
	return fmt.Errorf("authentication on, but %d application(s) were made, changed or given their secret while it was off, when anyone who could reach "+
		"the server could have asked: %s; start without --auth, delete them (folio app delete ID), then start with --auth "+
		"and make the ones you need again with the owner's credentials", len(apps), strings.Join(names, ", "))
}

// startSearch starts the search indexer over the change log, before the
// operations that query it.
func (n *Node) startSearch(ctx context.Context) error {
	dir := n.cfg.SearchDir
	if dir == "" && n.cfg.Store == nil {
		dir = filepath.Join(n.cfg.DataDir, "search")
	}
	n.search = search.New(n.changeLog, search.Options{Dir: dir, Logger: n.log, Ready: n.upgrade.Ensure})
	if err := n.search.Start(ctx); err != nil {
		n.search = nil
		return err
	}
	n.log.Info("search indexer started", "dir", dir)
	return nil
}

// pooled is a store whose transactions each hold one of a fixed number of
// connections (sqlkv). Checking for it here keeps the node, and what is
// above kv, from importing a backend for its pool size.
type pooled interface{ MaxConns() int }

// shareConnections sets the bounds left at their defaults on what may hold
// a store's connection for as long as a client likes: open interactive
// transactions get a quarter of the pool and streaming reads half, so
// that the short requests always find connections.
func (n *Node) shareConnections(cfg *Config) {
	p, ok := n.store.(pooled)
	if !ok {
		return
	}
	conns := p.MaxConns()
	if cfg.Sessions.MaxOpen == 0 {
		cfg.Sessions.MaxOpen = max(1, conns/4)
	}
	if cfg.MaxConcurrentReads == 0 {
		cfg.MaxConcurrentReads = max(1, conns/2)
	}
	n.log.Info("storage connections shared", "connections", conns,
		"max_open_transactions", cfg.Sessions.MaxOpen, "max_concurrent_reads", cfg.MaxConcurrentReads)
}

// Run starts a node and serves until ctx is done (a signal) or a transport
// fails, then shuts it down.
func Run(ctx context.Context, cfg Config) error {
	n, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	select {
	case <-n.served:
		err = n.serveErr
		n.log.Error("the API's listener failed", "err", err)
	case <-ctx.Done():
	}
	if cerr := n.Close(); err == nil {
		err = cerr
	}
	return err
}

// Addr is the API's listen address.
func (n *Node) Addr() net.Addr { return n.ln.Addr() }

// GRPCAddr is the address of the gRPC listener of its own, nil without one.
func (n *Node) GRPCAddr() net.Addr {
	if n.grpcOwn == nil {
		return nil
	}
	return n.grpcOwn.ln.Addr()
}

// Stats is a snapshot of what a node's streams and change log hold, for
// tests and metrics.
type Stats struct {
	Streams streams.Stats
	// LogReaders is the open readers of the change log behind the
	// streams: the hub's while any stream is live, and one per stream
	// catching up (the search indexer's are counted in Search).
	LogReaders int
	// Search is the search indexer's lag and indexes.
	Search search.Stats
	// LogBytes is what the change log takes, its records as stored (as
	// describe database reports it); -1 when the store cannot tell now.
	LogBytes int64
}

// Stats reports what the node's streams and change log hold now.
func (n *Node) Stats() Stats {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	logBytes, err := n.changeLog.Bytes(ctx)
	if err != nil {
		logBytes = -1
	}
	return Stats{Streams: n.hub.Stats(), LogReaders: n.streamReaders(), Search: n.search.Stats(ctx), LogBytes: logBytes}
}

// streamReaders is the open readers of the change log but the search
// indexer's, whose readers are its own business (its stats).
func (n *Node) streamReaders() int {
	return max(0, n.changeLog.Readers()-n.search.Readers())
}

// Close shuts the node down in the order of the package comment. It is
// safe to call more than once; later calls return the first's result.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.log.Info("shutting down: finishing requests in flight", "timeout", n.cfg.ShutdownTimeout)
		n.stopHTTP()
		n.closeErr = n.stopParts()
		n.log.Info("folio stopped")
	})
	return n.closeErr
}

// stopHTTP stops accepting, ends the streams and waits for the requests in
// flight, cutting off those still running at the timeout: HTTP's and
// gRPC's, on the API's port and on gRPC's own listener, at once.
func (n *Node) stopHTTP() {
	if n.pprof != nil {
		n.pprof.Close()
	}
	if n.metricsHTTP != nil {
		// Shutdown, not Close: a scrape in flight reads the parts, which
		// must not be stopped under it.
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ShutdownTimeout)
		n.metricsHTTP.Shutdown(ctx)
		cancel()
	}
	if n.http == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.ShutdownTimeout)
	defer cancel()
	n.mux.Close() // no new connection, of either protocol
	var wg sync.WaitGroup
	for _, g := range []*grpcServing{n.grpcShared, n.grpcOwn} {
		if g != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				g.stop(ctx, n)
			}()
		}
	}
	if err := n.http.Shutdown(ctx); err != nil {
		n.log.Warn("requests still running at the shutdown timeout were cut off", "err", err)
		n.http.Close()
	}
	<-n.served
	<-n.streamsEnded
	wg.Wait()
	// Every stream's reader went with its request; one still open here
	// belongs to a request cut off at the timeout.
	n.log.Info("shutdown: requests drained", "change_log_readers", n.streamReaders())
}

// endStreams ends the events and subscribe streams, each with an error
// that tells its client to resume: they never end by themselves, so a
// shutdown ends them first rather than wait for them until its timeout.
// The hub's change-log reader, which fed them, stops with them.
func (n *Node) endStreams() {
	n.endStreamsOnce.Do(func() {
		n.hub.Close()
		n.log.Info("shutdown: streams ended, their change-log reader stopped")
		close(n.streamsEnded)
	})
}

// stopParts stops what runs over the store, then closes the store. Each
// part may be missing (a Start that failed midway).
func (n *Node) stopParts() error {
	if n.cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := n.cluster.Leave(ctx); err != nil {
			n.log.Warn("shutdown: could not end this node's registration; the other nodes will know it gone when its lease runs out", "err", err)
		} else {
			n.log.Info("shutdown: left the nodes' registry")
		}
		cancel()
	}
	if n.forwarder != nil {
		n.forwarder.Close()
	}
	if n.sessions != nil {
		n.sessions.Close()
		n.log.Info("shutdown: open transactions rolled back")
	}
	if n.hub != nil {
		n.endStreams() // done already unless Start failed before the transports
	}
	if n.trimmer != nil {
		n.trimmer.stop()
		n.log.Info("shutdown: change-log trimmer stopped")
	}
	if n.search != nil {
		if err := n.search.Close(); err != nil {
			n.log.Error("shutdown: closing the search indexes failed", "err", err)
		} else {
			n.log.Info("shutdown: search indexer stopped")
		}
	}
	if n.store == nil {
		return nil
	}
	err := n.store.Close()
	if err != nil {
		n.log.Error("shutdown: closing the store failed", "err", err)
	} else {
		n.log.Info("shutdown: store closed")
	}
	return err
}

// listenHTTP opens the API's listener (serveHTTP serves it): its address
// is what the node advertises.
func (n *Node) listenHTTP(addr string) error {
	tcp, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	n.ln = newLimitListener(tcp, n.cfg.MaxConnections, n.log)
	return nil
}

// serveHTTP serves the API on the listener listenHTTP opened.
func (n *Node) serveHTTP() {
	ln := n.ln
	n.mux = newProtocolMux(n.withTLS(ln), sniffTimeout, n.log)
	n.http = &http.Server{
		Handler: n.withMetrics(httpapi.New(httpapi.Config{Ops: n.ops, Logger: n.log, MaxBodyBytes: n.cfg.MaxBodyBytes, CORSOrigins: n.cfg.CORSOrigins, Hosts: n.hosts(), HTTPS: n.tls != nil, ForwardTLS: n.forwardTLS(),
			BodyTimeout: n.cfg.BodyTimeout, WriteTimeout: n.cfg.WriteTimeout})),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       idleTimeout,
		ErrorLog:          slog.NewLogLogger(n.log.Handler(), slog.LevelWarn),
		// HTTP/2 without TLS, with prior knowledge (curl
		// --http2-prior-knowledge), beside HTTP/1.1.
		Protocols: new(http.Protocols),
		HTTP2:     &http.HTTP2Config{MaxConcurrentStreams: maxStreamsPerConnection},
	}
	n.http.Protocols.SetHTTP1(true)
	n.http.Protocols.SetUnencryptedHTTP2(true)
	n.http.RegisterOnShutdown(n.endStreams)
	n.served = make(chan struct{})
	go func() {
		defer close(n.served)
		n.serveErr = n.http.Serve(n.mux.http)
	}()
	n.grpcShared = n.serveGRPCOn(n.mux.grpc)
	protocols := "HTTP/1.1, h2c, gRPC"
	if n.tls != nil {
		protocols = "HTTPS (HTTP/1.1, HTTP/2), gRPC over TLS"
	}
	n.log.Info("folio listening", "addr", ln.Addr().String(), "protocols", protocols, "auth", n.cfg.Auth, "engine", n.engineName(), "data_dir", n.cfg.DataDir, "version", n.cfg.Version)
	if beyondLoopback(ln.Addr()) && !n.cfg.Auth {
		n.log.Warn("listening beyond loopback without authentication: anyone who can reach this address can read and change every database; listen on localhost, or put the server behind an authenticating proxy", "addr", ln.Addr().String())
	}
}

// withTLS serves ln over TLS if the node has a certificate. The protocol
// split sees the connection decrypted, as it would see a plain one.
func (n *Node) withTLS(ln net.Listener) net.Listener {
	if n.tls == nil {
		return ln
	}
	return tls.NewListener(ln, n.tls)
}

// idleTimeout is how long a connection with no request open stays open.
const idleTimeout = 2 * time.Minute

// beyondLoopback reports whether a listener's address can be reached from
// other machines: any address but a loopback one, the unspecified address
// (every interface) included.
func beyondLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return !ok || !tcp.IP.IsLoopback()
}

// engineName is the storage engine the node runs on, as --engine names
// it: "postgres" for a store shared through a connection pool, else
// "pebble" (also for a store a test gives).
func (n *Node) engineName() string {
	if _, shared := n.store.(pooled); shared {
		return "postgres"
	}
	return "pebble"
}

// servePprof serves the profiler's endpoints (/debug/pprof/...) on a
// listener of their own, so that they are never reachable through the API's
// address.
func (n *Node) servePprof(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof listener: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	n.pprof = &http.Server{Handler: checkingHost(n.hostsOf(ln, addr), mux), ReadHeaderTimeout: 10 * time.Second}
	go n.pprof.Serve(ln)
	n.log.Info("pprof listening", "addr", ln.Addr().String())
	return nil
}

// openStore opens the storage engine the configuration names: the one place
// where a backend is picked.
func openStore(ctx context.Context, cfg Config) (kv.Store, error) {
	switch cfg.Engine {
	case "", "pebble":
		if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
			return nil, fmt.Errorf("data directory: %w", err)
		}
		s, err := pebblekv.Open(pebblekv.Options{Dir: cfg.DataDir, MaxTxAge: cfg.MaxTxAge, CacheSize: cfg.CacheBytes, Compression: cfg.Compression, Logger: cfg.Logger})
		if err != nil {
			// Not s: a nil *Store in the interface is not a nil kv.Store,
			// and the failed Start would close it.
			return nil, err
		}
		return s, nil
	case "postgres":
		if cfg.PostgresURL == "" {
			return nil, errors.New("--engine postgres needs --postgres-url (or FOLIO_POSTGRES_URL)")
		}
		openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		s, err := sqlkv.Open(openCtx, sqlkv.Options{URL: cfg.PostgresURL, MaxTxAge: cfg.MaxTxAge, AcquireTimeout: cfg.AcquireTimeout, Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown engine %q: want pebble or postgres", cfg.Engine)
}

// background is a goroutine running a part until it is stopped.
type background struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func startBackground(run func(ctx context.Context)) *background {
	ctx, cancel := context.WithCancel(context.Background())
	b := &background{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		run(ctx)
	}()
	return b
}

// stop cancels the part and waits until it has returned.
func (b *background) stop() {
	b.cancel()
	<-b.done
}
