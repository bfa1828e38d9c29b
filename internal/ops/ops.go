// Package ops holds Folio's operations: one method per call of the Tigris
// v1 API, each taking a typed request and the caller, and returning a typed
// result or an error with its API code (a *apierror.Error). Everything a call
// does besides moving bytes on a wire lives here, written once for every
// transport: the order in which a request is checked, routing to the
// caller's interactive transaction or a transaction of its own (retried on
// conflict), looking the collection up, parsing filters, projections and
// sorts, the limits, and the choice between documents and messages.
// Every call opens and ends alike (calls.go: the role check against the
// calls table, the request timeout, the API code of its error, the
// request metrics), around the work that is its own.
//
// The transports (internal/httpapi, and gRPC later) only decode a request,
// call one method and encode what it returns. Nothing here knows HTTP.
package ops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/aggregate"
	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/cache"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/changelog"
	"github.com/foliodb/folio/internal/cluster"
	"github.com/foliodb/folio/internal/documents"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/messages"
	"github.com/foliodb/folio/internal/search"
	"github.com/foliodb/folio/internal/session"
	"github.com/foliodb/folio/internal/streams"
	"github.com/foliodb/folio/internal/tenant"
)

// Caller is who makes a request, as Authenticate found it from the
// request's credentials. The zero Caller is anonymous: on a server that
// does not require authentication it may do everything, in the default
// namespace; on one that does, it may call only health, info and the
// token endpoint.
type Caller struct {
	// App is the application the request acts for ("" when anonymous).
	App string
	// Namespace is the tenant whose databases the request sees; the zero
	// Namespace is the default one.
	Namespace auth.Namespace
	Role      auth.Role
	// Transport is the wire the request came by (TransportHTTP,
	// TransportGRPC), set by the transport: the request metrics count
	// calls by it.
	Transport string
	// Projects, set by the transport, says that the request names its
	// database as a project, as the 2023 API does (/v1/projects/...): a
	// database that is not there is then "project doesn't exist", as the
	// original's 2023 server said, rather than the 2022 wording, and
	// describe's model types (schema_format) are the final server's text.
	// It changes nothing else: a project is a database.
	Projects bool
	// OnlyProject, set by authentication, is the one project the caller
	// reaches when its token is an app key's of a project (see reach).
	OnlyProject string
	// refused is why the request's credentials were refused, if they
	// were: what a call that needs them answers.
	refused error
}

// The transports, as Caller.Transport names them.
const (
	TransportHTTP = "http"
	TransportGRPC = "grpc"
)

// ns is the id of the caller's namespace.
func (c Caller) ns() int64 {
	if c.Namespace.ID == 0 {
		return keyspace.DefaultNamespace
	}
	return c.Namespace.ID
}

// owner is what an interactive transaction is bound to: the application
// that began it, in its namespace.
func (c Caller) owner() string { return fmt.Sprintf("%d/%s", c.ns(), c.App) }

// principal is the caller as auth sees it; an anonymous caller of a server
// without authentication is the owner.
func (o *Ops) principal(c Caller) auth.Caller {
	if !o.cfg.RequireAuth && c.App == "" {
		return auth.Caller{Namespace: auth.Default, Role: auth.RoleOwner}
	}
	ns := c.Namespace
	if ns.ID == 0 {
		ns = auth.Default
	}
	return auth.Caller{App: c.App, Namespace: ns, Role: c.Role, Project: c.OnlyProject}
}

// Authenticate turns a request's Authorization header (or gRPC's
// "authorization" metadata) into its caller. Without RequireAuth the
// header is not read: every caller is anonymous, as on the original's
// local instance. A header that does not verify makes a caller whose
// calls, but those that need no credentials, answer why.
func (o *Ops) Authenticate(ctx context.Context, authorization string) Caller {
	if !o.cfg.RequireAuth {
		return Caller{}
	}
	token, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		token, ok = strings.CutPrefix(authorization, "bearer ")
	}
	if !ok || token == "" {
		return Caller{refused: auth.ErrUnauthenticated()}
	}
	p, err := o.auth.Verify(ctx, token)
	if err != nil {
		return Caller{refused: apiError(ctx, err)}
	}
	return Caller{App: p.App, Namespace: p.Namespace, Role: p.Role, OnlyProject: p.Project}
}

// TxRef names a client's interactive transaction: the id begin handed out
// and the node that holds it. A request with a zero TxRef (or one without
// an origin, as in the original) runs in a transaction of its own.
type TxRef struct {
	ID     string
	Origin string
}

// InTx reports whether the request names an interactive transaction.
func (t TxRef) InTx() bool { return t.ID != "" && t.Origin != "" }

// Config is what Ops runs on: the store and the long-running parts a node
// owns (built once by the node and shared with the other parts that need
// them), and the settings of a request (Options).
type Config struct {
	Options
	Store    kv.Store
	Sessions *session.Manager
	Streams  *streams.Hub
	Logger   *slog.Logger
	// Catalog and Docs are the node's catalog cache and document service,
	// shared with the search indexer. Auth keeps namespaces, applications
	// and tokens. All three are required.
	Catalog *catalog.Catalog
	Docs    *documents.Service
	Auth    *auth.Service
	// Search is the search indexer; nil answers searches UNIMPLEMENTED.
	Search *search.Indexer
	// Upgrade, if set, is what every call that reads the catalog makes
	// sure of first: a store written by an earlier version upgraded.
	Upgrade *catalog.Upgrade
	// ChangeLog is the store's change log, whose size describe database
	// reports; nil reports none.
	ChangeLog *changelog.Log
	// Cluster, if set, is the registry of the nodes that share the store:
	// requests of transactions that other nodes hold go there (ForwardTo).
	Cluster *cluster.Registry
	// Observer, if set, hears how every call ended (the request metrics).
	Observer Observer
	// Caches keeps the caches; nil makes one (whose sweep nothing runs).
	Caches *cache.Service
}

// Options are the settings of the operations, a node's configuration
// holds them (node.Config.Ops). Zero values take the defaults, but for
// SlowRequest and BackupDir, whose zero turns their feature off.
type Options struct {
	// Version is what the info call reports, with Engine, the storage
	// engine's name ("pebble", "postgres"); the node sets both.
	Version string
	Engine  string
	// MaxDocumentsPerRequest bounds the documents of one insert or replace
	// and the messages of one publish. Default 10,000.
	MaxDocumentsPerRequest int
	// MaxConcurrentReads bounds the reads streaming at once outside
	// interactive transactions (see readSlots); 0: unlimited. ReadWait is
	// how long a read waits for one of them before it is answered
	// UNAVAILABLE. Default 2s.
	MaxConcurrentReads int
	ReadWait           time.Duration
	// RequestTimeout bounds the time of every call but the streams (events,
	// subscribe): past it the call's work stops, a write is not applied, and
	// the call fails with DEADLINE_EXCEEDED. A read's bound covers the whole
	// read, streaming its results included. Default 30s.
	RequestTimeout time.Duration
	// SearchWait bounds how long a search waits for the indexer to catch
	// up with the writes acknowledged before the search (then
	// UNAVAILABLE). Default DefaultSearchWait, and never past
	// RequestTimeout.
	SearchWait time.Duration
	// RequireAuth makes every call but health, info and the token endpoint
	// need a valid access token, and checks its role; without it the
	// Authorization header is not read and every caller may do everything.
	RequireAuth bool
	// LogRequests logs every request at info level; without it only those
	// that failed are (see LogRequest). SlowRequest is the duration past
	// which a request is logged at warn level with the query plans it ran;
	// 0 (or less) logs none as slow.
	LogRequests bool
	SlowRequest time.Duration
	// MaxRequestBytes is the bound of a request's body the transports
	// enforce, which the quota limits call reports; the node sets it.
	MaxRequestBytes int64
	// BackupDir is the directory the backup call writes under, so that a
	// caller cannot have the server write (or probe) anywhere else; empty
	// turns the call off.
	BackupDir string
	// MaxAggregateGroups bounds the groups one aggregation holds in
	// memory; past it the call is refused (INVALID_ARGUMENT). Default
	// aggregate.DefaultMaxGroups (100,000).
	MaxAggregateGroups int
}

// DefaultMaxDocumentsPerRequest is Config.MaxDocumentsPerRequest's default.
const DefaultMaxDocumentsPerRequest = 10_000

// DefaultMaxAggregateGroups is Options.MaxAggregateGroups's default.
const DefaultMaxAggregateGroups = aggregate.DefaultMaxGroups

// DefaultRequestTimeout is Config.RequestTimeout's default: far longer than
// any request within the limits takes, short enough that a runaway one
// cannot hold a core (and its transaction) for minutes.
const DefaultRequestTimeout = 30 * time.Second

// Ops runs the API's calls.
type Ops struct {
	cfg      Config
	store    kv.Store
	log      *slog.Logger
	catalog  *catalog.Catalog
	docs     *documents.Service
	messages *messages.Service
	sessions *session.Manager
	hub      *streams.Hub
	search   *search.Indexer
	auth     *auth.Service
	health   healthProbe
	reads    readSlots
	forwards forwardCounts
	// quotas caches the namespaces' quotas; rates enforces their request
	// rates on this node; storageRefused counts the writes their storage
	// quotas refused (quota.go).
	quotas         *tenant.Quotas
	rates          *tenant.Rates
	storageRefused refusals
	caches         *cache.Service
}

// New returns the operations over cfg's store and parts.
func New(cfg Config) *Ops {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxDocumentsPerRequest <= 0 {
		cfg.MaxDocumentsPerRequest = DefaultMaxDocumentsPerRequest
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.MaxAggregateGroups <= 0 {
		cfg.MaxAggregateGroups = DefaultMaxAggregateGroups
	}
	if cfg.SearchWait <= 0 {
		cfg.SearchWait = DefaultSearchWait
	}
	if cfg.SlowRequest < 0 {
		cfg.SlowRequest = 0
	}
	o := &Ops{cfg: cfg, store: cfg.Store, log: cfg.Logger, catalog: cfg.Catalog, docs: cfg.Docs,
		messages: messages.New(), sessions: cfg.Sessions, hub: cfg.Streams, search: cfg.Search, auth: cfg.Auth, health: newHealthProbe(),
		reads: newReadSlots(cfg.MaxConcurrentReads, cfg.ReadWait), rates: tenant.NewRates(), caches: cfg.Caches}
	o.quotas = tenant.NewQuotas(o.loadQuota)
	if o.caches == nil {
		o.caches = cache.New(nil)
	}
	return o
}

// Info is what the info call reports.
type Info struct {
	ServerVersion string
	// Engine and Auth are Folio's: the storage engine, and whether calls
	// need a token (what a client checks before it sends credentials).
	Engine string
	Auth   bool
}

// Info reports the server's version.
func (o *Ops) Info(ctx context.Context, c Caller) (_ *Info, err error) {
	_, op, err := o.open(ctx, c, "Info")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return &Info{ServerVersion: o.cfg.Version, Engine: o.cfg.Engine, Auth: o.cfg.RequireAuth}, nil
}

// bounded returns ctx ending at the request timeout: what a call's opening
// bounds its work with, and a stream the lookup that opens it.
func (o *Ops) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, o.cfg.RequestTimeout)
}

// inTx runs fn in the caller's interactive transaction if tx names one, and
// in a transaction of its own (retried on conflict) otherwise, on database
// t: an interactive transaction must be t's (its database and branch), and
// a database or branch of t's that is not there is answered in the API's
// words (see missing). Inside an interactive transaction, a request that
// fails after it wrote leaves the transaction able only to roll back (the
// session's write tracker decides).
func (o *Ops) inTx(ctx context.Context, c Caller, t target, tx TxRef, fn func(tx kv.Tx) error) error {
	// As in the original: without an origin the request is not in a
	// transaction, whatever its id says.
	if err := o.cfg.Upgrade.Ensure(ctx); err != nil {
		return err
	}
	named := func(kt kv.Tx) error {
		err := fn(kt)
		if catalog.IsNoDatabase(err, t.stored) {
			return o.missing(ctx, kt, c, t)
		}
		return err
	}
	if !tx.InTx() {
		_, err := kv.Run(ctx, o.store, named)
		return err
	}
	if tx.Origin != o.sessions.Origin() {
		return o.heldElsewhere(ctx, tx, false)
	}
	return wrongDatabase(o.sessions.Run(ctx, tx.ID, c.owner(), t.stored, named))
}

// run runs fn in a transaction of its own, retried on conflict: for the
// calls the original never ran inside a client's transaction.
func (o *Ops) run(ctx context.Context, fn func(tx kv.Tx) error) error {
	if err := o.cfg.Upgrade.Ensure(ctx); err != nil {
		return err
	}
	_, err := kv.Run(ctx, o.store, fn)
	return err
}

// inCollection runs fn in the request's transaction with the collection
// looked up: the first step of every call on a collection's data.
func (o *Ops) inCollection(ctx context.Context, c Caller, db target, coll string, tx TxRef, fn func(tx kv.Tx, coll *catalog.Collection) error) error {
	return o.inTx(ctx, c, db, tx, func(t kv.Tx) error {
		found, err := o.catalog.Lookup(ctx, t, c.ns(), db.stored, coll)
		if err != nil {
			return err
		}
		if err := fn(t, found); err != nil {
			return err
		}
		// The collection's record, if Lookup reused it, is checked with
		// the first read; a call that read nothing checks it before it
		// answers (in a client's transaction there is no commit to).
		return t.CheckExpected(ctx)
	})
}

// Malformed, in a request, is why its transport could not decode the
// request's body, if it could not; the request's other fields, apart from
// the names, are then unset. The operation reports it right after it has
// checked the names, which come first, as in the original. gRPC, whose
// wire decodes everything before the call, sets it only for an options
// field it does not know.
//
// checkNames checks a request's database name and, if it has one, its
// collection name first, and then reports the request's Malformed.
func checkNames(db, coll string, hasColl bool, malformed error) error {
	if hasColl {
		if err := catalog.CheckCollectionName(coll); err != nil {
			return err
		}
	}
	if err := catalog.CheckDatabaseName(db); err != nil {
		return err
	}
	return malformed
}

// detail is what a kv limit error says after its sentinel's text (the
// sizes), without the layers' prefixes that mean nothing to a client.
func detail(err, sentinel error) string {
	msg := err.Error()
	if i := strings.Index(msg, sentinel.Error()); i >= 0 {
		msg = strings.TrimPrefix(msg[i+len(sentinel.Error()):], ": ")
	}
	return msg
}

// conflictRetryDelay is the retry advice sent with ABORTED.
const conflictRetryDelay = 10 * time.Millisecond

// unavailableRetryDelay is the retry advice sent with UNAVAILABLE when the
// storage cannot serve now: long enough for a connection to free up or a
// server to come back, short enough not to matter to a client.
const unavailableRetryDelay = time.Second

// storageFullRetryDelay is the retry advice sent while the store's disk is
// full: freeing space takes someone's hand, not a second.
const storageFullRetryDelay = 5 * time.Second

// apiError turns any error of the layers below into an API error. An error
// that carries a code (made by a part that read the request, see
// internal/apierror) keeps it; the others, the storage layers' (which make
// no codes: tests/archtest), a context's, get theirs here, the one
// place where they do. An error that is the server's fault becomes
// INTERNAL with the original error as its cause, for the log. ctx is the
// request's: once it is done, an error that does not say why (a backend
// whose connection was closed under a cancelled query) is the deadline's
// or the client's. Every call's end applies it (openCall.end).
func apiError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if se, ok := apierror.From(err); ok {
		return se
	}
	// Before the deadline's: a position the change log cannot serve is
	// the reader's to mend, whenever it is found out.
	if se := changeLogError(err); se != nil {
		return se
	}
	if done := ctx.Err(); done != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !kv.IsRetryable(err) {
		err = fmt.Errorf("%w: %w", done, err)
	}
	switch {
	case kv.IsRetryable(err):
		return &apierror.Error{Code: apierror.Aborted, Message: "transaction not committed due to conflict with another transaction", RetryDelay: conflictRetryDelay}
	// Before the deadline's: a write refused for want of space says so,
	// even if the request's time ran out meanwhile. No cause: the store
	// logs the full disk once, not each write it refuses.
	case errors.Is(err, kv.ErrStorageFull):
		return &apierror.Error{Code: apierror.ResourceExhausted, Message: "the server's disk is full: writes are refused until space is freed; retry later", RetryDelay: storageFullRetryDelay}
	case errors.Is(err, kv.ErrTxTooLarge):
		return &apierror.Error{Code: apierror.InvalidArgument, Message: "the request writes too much for one transaction (" + detail(err, kv.ErrTxTooLarge) + "): split it into smaller requests"}
	case errors.Is(err, kv.ErrKeyTooLarge):
		return &apierror.Error{Code: apierror.InvalidArgument, Message: "a primary key is too large for the store (" + detail(err, kv.ErrKeyTooLarge) + ")"}
	case errors.Is(err, kv.ErrValueTooLarge):
		return &apierror.Error{Code: apierror.InvalidArgument, Message: "a document is too large for the store (" + detail(err, kv.ErrValueTooLarge) + ")"}
	case errors.Is(err, context.DeadlineExceeded):
		return &apierror.Error{Code: apierror.DeadlineExceeded, Message: "context deadline exceeded"}
	case errors.Is(err, context.Canceled):
		return &apierror.Error{Code: apierror.Cancelled, Message: "request cancelled"}
	case errors.Is(err, kv.ErrClosed):
		return &apierror.Error{Code: apierror.Unavailable, Message: "server is shutting down"}
	// The cause names the damaged file: the operator's log gets it.
	case errors.Is(err, kv.ErrDataLoss):
		return &apierror.Error{Code: apierror.DataLoss, Message: "stored data is damaged: the server takes no writes and answers reads of the damaged part with this error until its operator restores the store (the server's log names the damaged file)", Cause: err}
	// The causes of these may name the storage's address and user: the
	// log gets them, the client a fixed message.
	case errors.Is(err, kv.ErrBusy):
		return &apierror.Error{Code: apierror.Unavailable, Message: "no storage connection free: the server has too many requests at once; retry later", RetryDelay: unavailableRetryDelay, Cause: err}
	case errors.Is(err, kv.ErrUnavailable):
		return &apierror.Error{Code: apierror.Unavailable, Message: "the storage cannot be reached right now; retry later", RetryDelay: unavailableRetryDelay, Cause: err}
	}
	return &apierror.Error{Code: apierror.Internal, Message: err.Error(), Cause: err}
}

// changeLogError is the API error of a change-log reader whose position
// the log cannot serve (changelog's sentinels), nil for any other error.
// A stream words these for itself (streams.Hub); this is the answer
// wherever else a reader's error reaches a call.
func changeLogError(err error) *apierror.Error {
	var msg string
	switch {
	case errors.Is(err, changelog.ErrTrimmed):
		msg = "the position is older than the oldest change the log still keeps (see the server's log retention); start again from a fresh position"
	case errors.Is(err, changelog.ErrAhead):
		msg = "the position is ahead of this server's change log: it comes from another server or data directory"
	case errors.Is(err, changelog.ErrCutOff):
		msg = "the log reader fell too far behind (it kept the log from being trimmed for longer than the retention allows) and was cut off; resync from a fresh position"
	case errors.Is(err, changelog.ErrCutOffBySize):
		msg = "the log reader fell too far behind (the change log reached its size bound, see the server's log retention bytes, and dropped changes it had not read); resync from a fresh position"
	default:
		return nil
	}
	return &apierror.Error{Code: apierror.OutOfRange, Message: msg}
}
