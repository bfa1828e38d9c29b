package ops

import (
	"context"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/tenant"
)

// Quota is what a namespace may use (tenant.Quota), as the transports
// name it.
type Quota = tenant.Quota

// Limits are the bounds a caller's requests meet: the server's own (a
// request's size and documents) and its namespace's quota (0: none).
type Limits struct {
	Quota tenant.Quota
	// MaxRequestBytes bounds a request's body, over HTTP and gRPC alike;
	// MaxDocumentsPerRequest the documents of one insert or replace.
	MaxRequestBytes        int64
	MaxDocumentsPerRequest int
}

// QuotaLimits reports the limits of the caller's namespace.
func (o *Ops) QuotaLimits(ctx context.Context, c Caller) (_ *Limits, err error) {
	ctx, op, err := o.open(ctx, c, "QuotaLimits")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	q, err := o.quotas.Get(ctx, c.ns(), time.Now())
	if err != nil {
		return nil, err
	}
	return &Limits{Quota: q, MaxRequestBytes: o.cfg.MaxRequestBytes, MaxDocumentsPerRequest: o.cfg.MaxDocumentsPerRequest}, nil
}

// Usage is what the caller's namespace uses: the bytes it stores, and its
// calls on the node that answers (the rate is bounded per node).
type Usage struct {
	StorageBytes int64
	// RequestsLastSecond is the calls the namespace made in the last whole
	// second on this node, counted while it has a rate quota; Refused
	// the calls its rate refused on this node since it started.
	RequestsLastSecond int64
	Refused            int64
	// StorageRefused is the writes its storage quota refused on this node
	// since it started.
	StorageRefused int64
}

// QuotaUsage reports the usage of the caller's namespace.
func (o *Ops) QuotaUsage(ctx context.Context, c Caller) (_ *Usage, err error) {
	ctx, op, err := o.open(ctx, c, "QuotaUsage")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	var size int64
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		size, err = o.catalog.NamespaceSize(ctx, tx, c.ns())
		return err
	})
	if err != nil {
		return nil, err
	}
	r := o.rates.Usage(c.ns(), time.Now())
	return &Usage{StorageBytes: size, RequestsLastSecond: r.LastSecond, Refused: r.Refused, StorageRefused: o.storageRefused.count(c.ns())}, nil
}

// SetNamespaceQuotaRequest sets the quota of the namespace named
// Namespace: Folio's call (the final API reads quotas but has no call to
// set them; the original read them from its configuration file).
type SetNamespaceQuotaRequest struct {
	Malformed error // see Malformed
	Namespace string
	Quota     tenant.Quota
}

// SetNamespaceQuota sets a namespace's quota; the zero quota removes it.
// It applies on this node at once and on the others within
// tenant.QuotaRefresh.
func (o *Ops) SetNamespaceQuota(ctx context.Context, c Caller, req SetNamespaceQuotaRequest) (_ *tenant.Quota, err error) {
	ctx, op, err := o.open(ctx, c, "SetNamespaceQuota")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	if err := tenant.CheckQuota(req.Quota); err != nil {
		return nil, err
	}
	var ns auth.Namespace
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		if ns, err = auth.LookupNamespace(ctx, tx, req.Namespace); err != nil {
			return err
		}
		return tenant.SaveQuota(tx, nsID(ns), req.Quota)
	})
	if err != nil {
		return nil, err
	}
	// The namespace's bucket stays (a rate of 0 passes it by), with the
	// calls it refused, which its usage reports.
	o.quotas.Set(nsID(ns), req.Quota, time.Now())
	o.log.Info("namespace quota set", "namespace", ns.Name, "storage_bytes", req.Quota.StorageBytes,
		"requests_per_second", req.Quota.RequestsPerSecond, "by", c.App)
	return &req.Quota, nil
}

func nsID(ns auth.Namespace) int64 {
	if ns.ID == 0 {
		return auth.Default.ID
	}
	return ns.ID
}

// loadQuota reads a namespace's quota from the store, for the node's
// cache of them.
func (o *Ops) loadQuota(ctx context.Context, ns int64) (q tenant.Quota, err error) {
	// A read ends with a commit, as the operations' reads do: a rollback
	// would count in the store's rollbacks, once a second per namespace.
	_, err = kv.Run(ctx, o.store, func(tx kv.Tx) (err error) {
		q, err = tenant.LoadQuota(ctx, tx.Snapshot(), ns)
		return err
	})
	return q, err
}

// checkRate takes a call of the caller's namespace from its rate quota,
// if it has one: every call's opening makes it, but for the calls anyone
// may make (health, info, tokens) and the owner's, so that a namespace
// held to its rate can still be given a higher one. It reads no store: a
// quota older than QuotaRefresh is read again in the background while
// the calls go on with the one last read (none until the first read), so
// that no call waits on, or fails by, a read it did not ask for (a
// damaged table, PostgreSQL's connections all taken by transactions).
func (o *Ops) checkRate(_ context.Context, c Caller, need auth.Role, now time.Time) error {
	if need == Anyone || need == auth.RoleOwner {
		return nil
	}
	q, stale := o.quotas.Peek(c.ns(), now)
	if stale {
		o.quotas.Refresh(c.ns(), now)
	}
	return o.rates.Allow(c.ns(), q.RequestsPerSecond, now)
}

// checkStorage refuses a write that leaves the caller's namespace storing
// more than its storage quota, from inside the writing transaction (whose
// own writes the count sees), so that a refused write is not applied. A
// quota older than QuotaRefresh is read in that transaction (a snapshot
// read: no conflict), never in a second one, which would wait for a
// transaction slot while holding one. The count reads the size counters
// without conflict ranges: writes of the namespace committing at once on
// several nodes do not see each other, and may overshoot the quota by
// what they write together (each at most one request:
// docs/operations.md).
func (o *Ops) checkStorage(ctx context.Context, tx kv.Tx, c Caller) error {
	now := time.Now()
	q, stale := o.quotas.Peek(c.ns(), now)
	if stale {
		var err error
		if q, err = tenant.LoadQuota(ctx, tx.Snapshot(), c.ns()); err != nil {
			return err
		}
		o.quotas.Set(c.ns(), q, now)
	}
	if q.StorageBytes == 0 {
		return nil
	}
	used, err := o.catalog.NamespaceSize(ctx, tx, c.ns())
	if err != nil {
		return err
	}
	if used > q.StorageBytes {
		o.storageRefused.add(c.ns())
		return tenant.ErrStorageExceeded(used, q.StorageBytes)
	}
	return nil
}

// refusals counts the writes refused by storage quota on this node, by
// namespace.
type refusals struct {
	mu sync.Mutex
	n  map[int64]int64
}

func (r *refusals) add(ns int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[int64]int64{}
	}
	r.n[ns]++
}

func (r *refusals) count(ns int64) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[ns]
}
