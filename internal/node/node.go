// Package node runs one Folio server. It owns the configuration (Config,
// whose defaults are DefaultConfig's) and the long-running parts: it opens
// the store, builds every part over it (interactive transactions, the
// change-log readers behind the streams, the log trimmer, the search
// indexer, the operations, and the transports: HTTP and gRPC on the API's
// port, split by protocol, and gRPC alone on a second port if configured),
// starts them in order (each a Part: built without starting anything, then
// Start and Close), stops them in the reverse order, and stops by itself
// when one fails (Err). `folio serve` reads its configuration in and calls
// Run; the black-box tests start nodes from the same defaults.
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
//  3. the node leaves the registry of the nodes on its database, if any;
//  4. the interactive transactions still open are rolled back;
//  5. the change-log trimmer stops;
//  6. the search indexer stops: it closes its indexes, which persist what
//     they hold with their watermarks (it reads the store, so it stops
//     before the store closes);
//  7. the store closes, after its in-flight commits.
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
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/cache"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/cluster"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/expiry"
	"github.com/foliodb/folio/internal/grpcapi"
	"github.com/foliodb/folio/internal/http1"
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

// Node is a running server.
type Node struct {
	cfg Config
	log *slog.Logger

	// parts are the node's long-running parts, in the order they start.
	parts    parts
	failures *failures

	store     kv.Store
	changeLog *changelog.Log
	catalog   *catalog.Catalog
	docs      *documents.Service
	sessions  *session.Manager
	hub       *streams.Hub
	search    *search.Indexer
	expiry    *expiry.Sweeper
	caches    *cache.Service
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
	// http1 serves the HTTP/1.x connections, unless HTTP1Server names
	// net/http, whose server (http) then serves them beside HTTP/2.
	http1  *http1.Server
	ln     net.Listener
	served chan struct{} // closed when the HTTP servers have returned
	// mux splits the API's port between the HTTP server and grpcShared;
	// grpcOwn, if GRPCAddr is set, serves gRPC on a listener of its own.
	mux            *protocolMux
	grpcShared     *grpcServing
	grpcOwn        *grpcServing
	endStreamsOnce sync.Once
	// streamsEnded is closed once a shutdown has ended the streams.
	streamsEnded chan struct{}
	pprof        *http.Server
	pprofLn      net.Listener
	metrics      *metrics.Metrics
	metricsHTTP  *http.Server // MetricsAddr's server; nil without one
	metricsLn    net.Listener

	closeOnce sync.Once
	closeErr  error
}

// Start opens the store, builds every part and starts them in order; the
// API is served when it returns. On an error, whatever had started is
// stopped again, in reverse.
func Start(ctx context.Context, cfg Config) (_ *Node, err error) {
	if cfg, err = settle(cfg); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, log: cfg.Logger, streamsEnded: make(chan struct{}), failures: newFailures()}
	defer func() {
		if err != nil {
			n.failures.shuttingDown()
			n.parts.stop(n)
		}
	}()
	if n.store = cfg.Store; n.store == nil {
		if n.store, err = openStore(ctx, cfg); err != nil {
			return nil, err
		}
	}
	// The store is open once opened (the backends' goroutines start in
	// Open): the first part, so that it closes last.
	n.parts.add("store", funcs{close: n.store.Close}, "shutdown: store closed")
	n.parts.started = 1
	if err := n.build(ctx); err != nil {
		return nil, err
	}
	if err := n.parts.start(ctx); err != nil {
		return nil, err
	}
	return n, nil
}

// settle checks cfg and fills what it leaves to the node: the logger, the
// zero limits that have a default, the parts' settings that follow from
// the node's.
func settle(cfg Config) (Config, error) {
	def := DefaultConfig()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = def.DataDir
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = def.ShutdownTimeout
	}
	if cfg.Ops.BackupDir != "" {
		// Backups answer with their whole path, which a restore needs
		// whatever directory the server was started in.
		dir, err := filepath.Abs(cfg.Ops.BackupDir)
		if err != nil {
			return cfg, fmt.Errorf("backup directory: %w", err)
		}
		cfg.Ops.BackupDir = dir
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = def.MaxConnections
	}
	// The transports' limits are settled here, once, so that HTTP and
	// gRPC apply the same ones.
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = def.MaxBodyBytes
	}
	if cfg.BodyTimeout <= 0 {
		cfg.BodyTimeout = def.BodyTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = def.WriteTimeout
	}
	switch cfg.HTTP1Server {
	case "":
		cfg.HTTP1Server = def.HTTP1Server
	case HTTP1FastHTTP, HTTP1NetHTTP:
	default:
		return cfg, fmt.Errorf("HTTP/1.1 server %q: must be %s or %s", cfg.HTTP1Server, HTTP1FastHTTP, HTTP1NetHTTP)
	}
	if cfg.Sessions.Origin == "" {
		cfg.Sessions.Origin = defaultNodeID(cfg.Addr)
	}
	if cfg.Sessions.MaxLifetime <= 0 {
		// An interactive transaction lives as long as the store lets a
		// transaction stay open.
		cfg.Sessions.MaxLifetime = cfg.MaxTxAge
	}
	if cfg.Search.Dir == "" && cfg.Store == nil {
		cfg.Search.Dir = filepath.Join(cfg.DataDir, "search")
	}
	if cfg.OwnerFile == "" {
		cfg.OwnerFile = filepath.Join(cfg.DataDir, "owner.json")
	}
	cfg.Sessions.Logger = cfg.Logger
	cfg.Streams.Logger = cfg.Logger
	cfg.ChangeLog.Logger = cfg.Logger
	cfg.Tokens.Logger = cfg.Logger
	cfg.Cluster.Logger = cfg.Logger
	cfg.Search.Logger = cfg.Logger
	cfg.Ops.RequireAuth = cfg.Auth
	cfg.Ops.ReadWait = cfg.AcquireTimeout
	cfg.Ops.Version = cfg.Version
	return cfg, nil
}

// build makes the node's parts over its store, the shared ones once
// (catalog cache, documents, authentication), and lists the long-running
// ones in the order they start.
func (n *Node) build(ctx context.Context) error {
	cfg := &n.cfg
	n.shareConnections(cfg)
	cfg.Ops.Engine = n.engineName()
	n.upgrade = catalog.NewUpgrade(n.store, n.log)
	if err := n.upgrade.Ensure(ctx); err != nil {
		n.log.Warn("the store's catalog could not be brought up to date yet; requests will try again", "err", err)
	}
	if err := n.startAuth(ctx); err != nil {
		return err
	}
	n.catalog = catalog.New()
	n.docs = documents.New()
	n.docs.Log = n.log
	if cfg.Expiry.Now != nil {
		n.docs.Now = cfg.Expiry.Now // one clock for reads and the sweep
	}
	n.changeLog = changelog.NewLog(n.store, cfg.ChangeLog)
	n.sessions = session.New(n.store, cfg.Sessions)
	n.hub = streams.NewHub(n.changeLog, cfg.Streams)
	so := cfg.Search
	so.Ready, so.Catalog, so.Docs = n.upgrade.Ensure, n.catalog, n.docs
	n.search = search.New(n.changeLog, so)
	if _, shared := n.store.(pooled); shared {
		n.cluster = cluster.New(n.store, cfg.Cluster)
	}
	eo := cfg.Expiry
	eo.Now, eo.Logger = n.docs.Now, n.log
	if n.cluster != nil && eo.Leader == nil {
		eo.Leader = n.cluster.Leads // one node sweeps at a time
	}
	n.expiry = expiry.New(n.store, n.catalog, n.docs, eo)
	n.metrics = metrics.New(cfg.Version, n.metricSources())
	// The transports enforce the body bound; the quota limits call
	// reports it.
	opsOptions := cfg.Ops
	opsOptions.MaxRequestBytes = cfg.MaxBodyBytes
	n.caches = cache.New(nil)
	n.ops = ops.New(ops.Config{Options: opsOptions, Store: n.store, Observer: n.metrics, Sessions: n.sessions, Streams: n.hub,
		Search: n.search, ChangeLog: n.changeLog, Logger: n.log, Catalog: n.catalog, Docs: n.docs, Auth: n.auth,
		Upgrade: n.upgrade, Cluster: n.cluster, Caches: n.caches})
	n.forwarder = grpcapi.NewForwarder(n.forwardTLS())

	// The search indexer reads the store, so it stops before the store
	// closes; it starts before the operations that query it.
	n.parts.add("search indexer", logStart(n.search, n.log, "search indexer started", "dir", cfg.Search.Dir), "shutdown: search indexer stopped")
	if cfg.ChangeLog.Retention > 0 || cfg.ChangeLog.MaxBytes > 0 {
		n.parts.add("change-log trimmer", newRunner(n.changeLog.RunTrimmer), "shutdown: change-log trimmer stopped")
	}
	n.parts.add("ttl sweeper", newRunner(n.expiry.Run), "")
	// Every node sweeps the caches' expired entries (idempotent, so two
	// nodes at once only conflict and retry).
	n.parts.add("cache sweep", newRunner(func(ctx context.Context) { n.caches.Run(ctx, n.store, 0, n.log) }), "")
	// Stopped after the transports, which end the streams first.
	n.parts.add("streams", funcs{start: n.hub.Start, close: func() error { n.endStreams(); return nil }}, "")
	n.parts.add("transactions", n.sessions, "shutdown: open transactions rolled back")
	n.parts.add("forwarder", funcs{close: func() error { n.forwarder.Close(); return nil }}, "")
	// The API's listener opens before the node joins (its address is the
	// one advertised), and the node joins before it serves: a transaction
	// begun here before the other nodes can locate this one would look
	// lost to them ("session is gone"), and then held elsewhere once it
	// joined.
	n.parts.add("API listener", funcs{start: func(context.Context) error { return n.listenHTTP(cfg.Addr) }, close: n.closeListener}, "")
	if n.cluster != nil {
		n.parts.add("cluster registration", funcs{start: n.join, close: n.leave}, "")
	}
	n.parts.add("transports", funcs{start: n.serveAPI, close: n.stopAPI}, "")
	if cfg.MetricsAddr != "" {
		n.parts.add("metrics server", funcs{start: func(context.Context) error { return n.serveMetrics(cfg.MetricsAddr) }, close: n.stopMetrics}, "")
	}
	if cfg.PprofAddr != "" {
		n.parts.add("pprof server", funcs{start: func(context.Context) error { return n.servePprof(cfg.PprofAddr) }, close: n.pprofClose}, "")
	}
	return nil
}

// logStart is p, logging msg once it started.
func logStart(p Part, log *slog.Logger, msg string, args ...any) Part {
	return funcs{start: func(ctx context.Context) error {
		if err := p.Start(ctx); err != nil {
			return err
		}
		log.Info(msg, args...)
		return nil
	}, close: p.Close}
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
	n.auth = auth.New(n.store, n.cfg.Tokens)
	if !n.cfg.Auth {
		return nil
	}
	if err := n.refuseAppsMadeWithoutAuth(ctx); err != nil {
		return err
	}
	file := n.cfg.OwnerFile
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
	if cfg.Ops.MaxConcurrentReads == 0 {
		cfg.Ops.MaxConcurrentReads = max(1, conns/2)
	}
	n.log.Info("storage connections shared", "connections", conns,
		"max_open_transactions", cfg.Sessions.MaxOpen, "max_concurrent_reads", cfg.Ops.MaxConcurrentReads)
}

// Run starts a node and serves until ctx is done (a signal) or a part
// fails, then shuts it down; it returns the failure. It also sets the
// garbage collector's target (Config.GCPercent) unless GOGC does: Run is
// the binary's way to run a node, and the target is the process's.
func Run(ctx context.Context, cfg Config) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(cfg.GCPercent)
	}
	n, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	return n.Wait(ctx)
}

// Wait serves until ctx is done or a part fails (Err), then shuts the
// node down. It returns the part's failure, else Close's error.
func (n *Node) Wait(ctx context.Context) error {
	var err error
	select {
	case err = <-n.Err():
		n.log.Error("a part of the node failed: shutting down", "err", err)
	case <-ctx.Done():
	}
	if cerr := n.Close(); err == nil {
		err = cerr
	}
	return err
}

// Err reports the first failure of a running part (a listener that
// breaks), as etcd's embed.Etcd does: the node cannot serve as configured
// any more, and whoever runs it (Wait) shuts it down. Nothing is sent
// during a shutdown.
func (n *Node) Err() <-chan error { return n.failures.ch }

// Config is the node's configuration as it runs: cfg as given to Start,
// with what Start settled (the logger, the node id, the shares of the
// store's connections, the derived directories).
func (n *Node) Config() Config { return n.cfg }

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

// Close shuts the node down in the order of the package comment: its
// parts in the reverse of their start. It is safe to call more than once;
// later calls return the first's result.
func (n *Node) Close() error {
	n.closeOnce.Do(func() {
		n.failures.shuttingDown()
		n.log.Info("shutting down: finishing requests in flight", "timeout", n.cfg.ShutdownTimeout)
		n.closeErr = n.parts.stop(n)
		n.log.Info("folio stopped")
	})
	return n.closeErr
}

// stopAPI stops accepting, ends the streams and waits for the requests in
// flight, cutting off those still running at the timeout: HTTP's and
// gRPC's, on the API's port and on gRPC's own listener, at once.
func (n *Node) stopAPI() error {
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
	if n.http1 != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// net/http's server ends the streams on its shutdown
			// (RegisterOnShutdown); this one's are the same streams.
			n.endStreams()
			if err := n.http1.Shutdown(ctx); err != nil {
				n.log.Warn("HTTP/1.1 requests still running at the shutdown timeout were cut off", "err", err)
				n.http1.Close()
			}
		}()
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
	return nil
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

// leave ends the node's registration among the nodes on its database. A
// failure is no failure of the shutdown: the registration lapses.
func (n *Node) leave() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.cluster.Leave(ctx); err != nil {
		n.log.Warn("shutdown: could not end this node's registration; the other nodes will know it gone when its lease runs out", "err", err)
	} else {
		n.log.Info("shutdown: left the nodes' registry")
	}
	return nil
}

// closeListener closes the API's listener if the transports did not (they
// failed to start).
func (n *Node) closeListener() error {
	n.ln.Close()
	return nil
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

// serveAPI serves the API on the listener listenHTTP opened, HTTP and
// gRPC, and gRPC alone on GRPCAddr if set.
func (n *Node) serveAPI(context.Context) error {
	ln := n.ln
	ownHTTP1 := n.cfg.HTTP1Server != HTTP1NetHTTP
	n.mux = newProtocolMux(n.withTLS(ln), sniffTimeout, ownHTTP1, n.log)
	api := n.withConsole(n.withMetrics(httpapi.New(httpapi.Config{Ops: n.ops, Logger: n.log, MaxBodyBytes: n.cfg.MaxBodyBytes, CORSOrigins: n.cfg.CORSOrigins, Hosts: n.hosts(), HTTPS: n.tls != nil, ForwardTLS: n.forwardTLS(),
		BodyTimeout: n.cfg.BodyTimeout, WriteTimeout: n.cfg.WriteTimeout})))
	n.http = &http.Server{
		Handler:           api,
		ReadHeaderTimeout: headerTimeout,
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
	var serving sync.WaitGroup
	serving.Add(1)
	go func() {
		defer serving.Done()
		if err := n.http.Serve(n.mux.http); !errors.Is(err, http.ErrServerClosed) {
			n.failures.fail(fmt.Errorf("the API's listener: %w", err))
		}
	}()
	if ownHTTP1 {
		n.http1 = http1.New(http1.Config{Handler: api, Logger: n.log, MaxBodyBytes: n.cfg.MaxBodyBytes,
			HeaderTimeout: headerTimeout, BodyTimeout: n.cfg.BodyTimeout, WriteTimeout: n.cfg.WriteTimeout, IdleTimeout: idleTimeout,
			LongLived: httpapi.IsStream, SlowBody: httpapi.AnswerSlowBody, Refuse: httpapi.AnswerRefused})
		serving.Add(1)
		go func() {
			defer serving.Done()
			if err := n.http1.Serve(n.mux.http1); err != nil {
				n.failures.fail(fmt.Errorf("the API's listener (HTTP/1.1): %w", err))
			}
		}()
	}
	go func() {
		serving.Wait()
		close(n.served)
	}()
	n.grpcShared = n.serveGRPCOn(n.mux.grpc, "the API's listener (gRPC)")
	protocols := "HTTP/1.1, h2c, gRPC"
	if n.tls != nil {
		protocols = "HTTPS (HTTP/1.1, HTTP/2), gRPC over TLS"
	}
	n.log.Info("folio listening", "addr", ln.Addr().String(), "protocols", protocols, "http1_server", n.cfg.HTTP1Server, "auth", n.cfg.Auth, "engine", n.engineName(), "data_dir", n.cfg.DataDir, "version", n.cfg.Version)
	if beyondLoopback(ln.Addr()) && !n.cfg.Auth {
		n.log.Warn("listening beyond loopback without authentication: anyone who can reach this address can read and change every database; listen on localhost, or put the server behind an authenticating proxy", "addr", ln.Addr().String())
	}
	if n.cfg.GRPCAddr != "" {
		if err := n.serveGRPC(n.cfg.GRPCAddr); err != nil {
			n.stopAPI()
			return err
		}
	}
	return nil
}

// withTLS serves ln over TLS if the node has a certificate. The protocol
// split sees the connection decrypted, as it would see a plain one.
func (n *Node) withTLS(ln net.Listener) net.Listener {
	if n.tls == nil {
		return ln
	}
	return tls.NewListener(ln, n.tls)
}

// idleTimeout is how long a connection with no request open stays open;
// headerTimeout how long a request's headers may take to arrive.
const (
	idleTimeout   = 2 * time.Minute
	headerTimeout = 10 * time.Second
)

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
	n.pprofLn = ln
	go func() {
		if err := n.pprof.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			n.failures.fail(fmt.Errorf("pprof listener: %w", err))
		}
	}()
	n.log.Info("pprof listening", "addr", ln.Addr().String())
	return nil
}

func (n *Node) pprofClose() error {
	n.pprof.Close()
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
		opts := cfg.Pebble
		opts.Dir, opts.MaxTxAge, opts.Logger = cfg.DataDir, cfg.MaxTxAge, cfg.Logger
		s, err := pebblekv.Open(opts)
		if err != nil {
			// Not s: a nil *Store in the interface is not a nil kv.Store,
			// and the failed Start would close it.
			return nil, err
		}
		return s, nil
	case "postgres":
		if cfg.Postgres.URL == "" {
			return nil, errors.New("--engine postgres needs --postgres-url (or FOLIO_POSTGRES_URL)")
		}
		openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		s, err := sqlkv.Open(openCtx, sqlkv.Options{URL: cfg.Postgres.URL, MaxTxAge: cfg.MaxTxAge, AcquireTimeout: cfg.AcquireTimeout, Logger: cfg.Logger})
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, fmt.Errorf("unknown engine %q: want pebble or postgres", cfg.Engine)
}
