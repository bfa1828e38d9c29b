package ops

import (
	"context"
	"time"

	"github.com/foliodb/folio/internal/cache"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
)

// The final API's caches (/v1/projects/{project}/caches): a project's
// named key-value caches, kept by internal/cache. A cache's calls look the
// project and the cache up in a transaction of their own (never a
// client's: the original ran none there), in which a durable cache's
// entry is read and written too; a volatile cache's entry is in this
// node's memory, reached once the lookup's transaction has ended, so that
// a retried transaction cannot apply a set twice. The node remembers the
// records it looked up (cache/records.go): a volatile cache's calls then
// run no transaction at all, for up to cache.RecordBound, and a durable
// cache's read only its entry.

// The cache's own types, by the names the transports know them by (they
// speak to ops only).
type (
	CacheOptions    = cache.Options
	CacheSetOptions = cache.SetOptions
	CacheKeys       = cache.KeysRequest
	CacheKeysPage   = cache.KeysPage
)

// CacheRequest names a cache, and for CreateCache gives its options.
type CacheRequest struct {
	Malformed     error
	Project, Name string
	Options       cache.Options
}

// CacheKeyRequest is a call on one key of a cache: set (Value, Set),
// getset (Value), get and del.
type CacheKeyRequest struct {
	Malformed           error
	Project, Cache, Key string
	Value               []byte
	Set                 cache.SetOptions
}

// CacheKeysRequest lists a cache's keys.
type CacheKeysRequest struct {
	Malformed      error
	Project, Cache string
	Keys           cache.KeysRequest
}

// CacheValue is a get's answer: the value, and the time the entry has
// left (0: it does not expire).
type CacheValue struct {
	Value []byte
	Left  time.Duration
}

// cacheTarget checks a cache request's names: the project's, the cache's,
// then malformed.
func (c Caller) cacheTarget(project, name string, malformed error) (target, error) {
	if err := catalog.CheckDatabaseName(project); err != nil {
		return target{}, err
	}
	if err := catalog.CheckCacheName(name); err != nil {
		return target{}, err
	}
	return c.resolve(project, "", "", false, malformed)
}

// CreateCache creates a cache in a project.
func (o *Ops) CreateCache(ctx context.Context, c Caller, req CacheRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "CreateCache")
	defer op.end(&err)
	if err != nil {
		return err
	}
	db, err := c.cacheTarget(req.Project, req.Name, req.Malformed)
	if err != nil {
		return err
	}
	err = o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) error {
		return o.caches.Create(ctx, tx, d.ID, req.Name, req.Options)
	})
	if err == nil {
		// A record of a cache of that name deleted on another node may
		// still be remembered here.
		o.caches.Forget(cacheKey(c, db, req.Name))
	}
	return err
}

// DeleteCache removes a cache and its entries.
func (o *Ops) DeleteCache(ctx context.Context, c Caller, req CacheRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteCache")
	defer op.end(&err)
	if err != nil {
		return err
	}
	db, err := c.cacheTarget(req.Project, req.Name, req.Malformed)
	if err != nil {
		return err
	}
	err = o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) error {
		return o.caches.Delete(ctx, tx, d.ID, req.Name)
	})
	if err == nil {
		o.caches.Forget(cacheKey(c, db, req.Name))
	}
	return err
}

// ListCaches lists a project's caches by name.
func (o *Ops) ListCaches(ctx context.Context, c Caller, req CacheRequest) (_ []string, err error) {
	ctx, op, err := o.open(ctx, c, "ListCaches")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if err := catalog.CheckDatabaseName(req.Project); err != nil {
		return nil, err
	}
	db, err := c.resolve(req.Project, "", "", false, req.Malformed)
	if err != nil {
		return nil, err
	}
	var names []string
	err = o.inProject(ctx, c, db, func(tx kv.Tx, d *catalog.Database) (err error) {
		names, err = o.caches.List(ctx, tx, d.ID)
		return err
	})
	return names, err
}

// CacheSet sets a key's value.
func (o *Ops) CacheSet(ctx context.Context, c Caller, req CacheKeyRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "CacheSet")
	defer op.end(&err)
	if err != nil {
		return err
	}
	return o.onCache(ctx, c, req.Project, req.Cache, req.Malformed, func(tx kv.Tx, ch *cache.Cache) error {
		if err := o.checkCacheStorage(ctx, tx, c); err != nil {
			return err
		}
		return o.caches.Set(ctx, tx, ch, req.Key, req.Value, req.Set)
	})
}

// CacheGetSet sets a key's value and returns the one it had (nil and
// false if none).
func (o *Ops) CacheGetSet(ctx context.Context, c Caller, req CacheKeyRequest) (old []byte, found bool, err error) {
	ctx, op, err := o.open(ctx, c, "CacheGetSet")
	defer op.end(&err)
	if err != nil {
		return nil, false, err
	}
	err = o.onCache(ctx, c, req.Project, req.Cache, req.Malformed, func(tx kv.Tx, ch *cache.Cache) (err error) {
		if err := o.checkCacheStorage(ctx, tx, c); err != nil {
			return err
		}
		old, found, err = o.caches.GetSet(ctx, tx, ch, req.Key, req.Value)
		return err
	})
	return old, found, err
}

// CacheGet returns a key's value, or NOT_FOUND if the key is absent or
// expired.
func (o *Ops) CacheGet(ctx context.Context, c Caller, req CacheKeyRequest) (_ *CacheValue, err error) {
	ctx, op, err := o.open(ctx, c, "CacheGet")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	var v CacheValue
	err = o.onCache(ctx, c, req.Project, req.Cache, req.Malformed, func(tx kv.Tx, ch *cache.Cache) (err error) {
		v.Value, v.Left, err = o.caches.Get(ctx, tx, ch, req.Key)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// CacheDel removes a key, and returns how many entries it removed (0 or
// 1).
func (o *Ops) CacheDel(ctx context.Context, c Caller, req CacheKeyRequest) (n int64, err error) {
	ctx, op, err := o.open(ctx, c, "CacheDel")
	defer op.end(&err)
	if err != nil {
		return 0, err
	}
	err = o.onCache(ctx, c, req.Project, req.Cache, req.Malformed, func(tx kv.Tx, ch *cache.Cache) (err error) {
		n, err = o.caches.Del(ctx, tx, ch, req.Key)
		return err
	})
	return n, err
}

// CacheKeys streams a cache's keys that match a pattern, a page at a time
// (cache.Keys: its bounds and its cursor), within the request timeout.
func (o *Ops) CacheKeys(ctx context.Context, c Caller, req CacheKeysRequest, send func(cache.KeysPage) error) (err error) {
	ctx, op, err := o.open(ctx, c, "CacheKeys")
	defer op.end(&err)
	if err != nil {
		return err
	}
	var found *cache.Cache
	err = o.onCache(ctx, c, req.Project, req.Cache, req.Malformed, func(_ kv.Tx, ch *cache.Cache) error {
		found = ch
		return nil
	})
	if err != nil {
		return err
	}
	return o.caches.Keys(ctx, func(fn func(kv.Tx) error) error { return o.run(ctx, fn) }, found, req.Keys, send)
}

// cacheKey names cache name of target db for the records remembered.
func cacheKey(c Caller, db target, name string) cache.RecordKey {
	return cache.RecordKey{NS: c.ns(), Project: db.stored, Name: name}
}

// onCache runs fn on cache name of project: in the lookup's transaction
// for a durable cache, after it for a volatile one (with a nil tx). A
// volatile cache whose record this node read lately needs no transaction;
// a durable one whose record it remembers is looked up without a read, the
// record checked with the entry's read or at commit.
// checkCacheStorage refuses a durable cache's write (tx set) while the
// caller's namespace stores more than its storage quota; a volatile
// cache's (tx nil) is kept in memory, not in the store. Cache entries
// themselves are not counted in the namespace's storage (docs/api.md).
func (o *Ops) checkCacheStorage(ctx context.Context, tx kv.Tx, c Caller) error {
	if tx == nil {
		return nil
	}
	return o.checkStorage(ctx, tx, c)
}

func (o *Ops) onCache(ctx context.Context, c Caller, project, name string, malformed error, fn func(tx kv.Tx, ch *cache.Cache) error) error {
	db, err := c.cacheTarget(project, name, malformed)
	if err != nil {
		return err
	}
	k := cacheKey(c, db, name)
	if ch := o.caches.Fresh(k); ch != nil {
		return fn(nil, ch)
	}
	read := o.caches.BeginRead()
	var volatile *cache.Cache
	err = o.inTx(ctx, c, db, TxRef{}, func(tx kv.Tx) error {
		volatile = nil
		ch, err := o.caches.Expected(tx, k)
		if err != nil {
			return err
		}
		if ch == nil {
			d, err := o.catalog.Database(ctx, tx, c.ns(), db.stored)
			if err != nil {
				return err
			}
			if ch, err = o.caches.LookupRemembering(ctx, tx, k, d.ID, read); err != nil {
				return err
			}
		}
		if ch.Volatile {
			volatile = ch
			return nil
		}
		if err := fn(tx, ch); err != nil {
			return err
		}
		// fn answers from its reads, which checked the expected record;
		// one that read nothing (a set) has it checked here, before the
		// commit would.
		return tx.CheckExpected(ctx)
	})
	if err != nil || volatile == nil {
		return err
	}
	return fn(nil, volatile)
}
