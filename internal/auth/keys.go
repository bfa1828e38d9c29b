package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// A signing key signs access and refresh tokens (Ed25519, "EdDSA" in a
// JWT's header, with its id as "kid"). The newest key signs; every key
// verifies until it is dropped, which RotateSigningKey does once no token
// it signed can still be valid. Every node reads the keys from the store,
// so a key made on one node verifies on all.
type signingKey struct {
	ID        string
	Private   ed25519.PrivateKey
	CreatedAt time.Time
	// RetiredAt is when a newer key took over (zero for the newest).
	RetiredAt time.Time
}

type keyRecord struct {
	Seed      []byte    `json:"seed"`
	CreatedAt time.Time `json:"created_at"`
	RetiredAt time.Time `json:"retired_at,omitzero"`
}

// keyRing is a node's copy of the signing keys.
type keyRing struct {
	store kv.Store
	mu    sync.Mutex
	keys  map[string]*signingKey
	// newest signs; loaded is when the ring was last read.
	newest *signingKey
	loaded time.Time
}

func newKeyRing(store kv.Store) *keyRing {
	return &keyRing{store: store, keys: map[string]*signingKey{}}
}

// reloadEvery bounds how often an unknown key id makes a node read the
// keys again: a token signed with a key made on another node since the
// last read verifies after one read; a forged key id costs at most one.
const reloadEvery = time.Second

// resignEvery is how often a node reads the keys again to sign with the
// newest: a key rotated on another node signs here within it. Keys are
// kept far longer than that after they retire (RotateSigningKey).
const resignEvery = time.Minute

// newKeyID orders keys by creation: the time leads.
func newKeyID(now time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%016x%s", now.UnixNano(), hex.EncodeToString(b[:]))
}

// load reads every key of the store.
func (r *keyRing) load(ctx context.Context, now time.Time) error {
	keys := map[string]*signingKey{}
	var newest *signingKey
	_, err := kv.Run(ctx, r.store, func(tx kv.Tx) error {
		clear(keys)
		newest = nil
		it := tx.Snapshot().Scan(ctx, keyspace.SigningKeys(), kv.ScanOptions{})
		defer it.Close()
		for it.Next() {
			k, err := decodeKey(it.Key(), it.Value())
			if err != nil {
				return err
			}
			keys[k.ID] = k
			if newest == nil || newer(k, newest) {
				newest = k
			}
		}
		return it.Err()
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.keys, r.newest, r.loaded = keys, newest, now
	r.mu.Unlock()
	return nil
}

// newer reports whether a should sign rather than b: a key not retired
// over a retired one, then the later made.
func newer(a, b *signingKey) bool {
	if a.RetiredAt.IsZero() != b.RetiredAt.IsZero() {
		return a.RetiredAt.IsZero()
	}
	return a.ID > b.ID
}

func decodeKey(key, value []byte) (*signingKey, error) {
	id, err := keyspace.LastString(key)
	if err != nil {
		return nil, corrupt("signing key", key, err)
	}
	var rec keyRecord
	if err := json.Unmarshal(value, &rec); err != nil {
		return nil, corrupt("signing key", key, err)
	}
	if len(rec.Seed) != ed25519.SeedSize {
		return nil, corrupt("signing key", key, fmt.Errorf("seed of %d bytes", len(rec.Seed)))
	}
	return &signingKey{ID: id, Private: ed25519.NewKeyFromSeed(rec.Seed), CreatedAt: rec.CreatedAt, RetiredAt: rec.RetiredAt}, nil
}

// signer returns the newest key, making the first one if the store has
// none.
func (r *keyRing) signer(ctx context.Context, now time.Time) (*signingKey, error) {
	r.mu.Lock()
	k, stale := r.newest, now.Sub(r.loaded) >= resignEvery
	r.mu.Unlock()
	if k != nil && !stale {
		return k, nil
	}
	if err := r.load(ctx, now); err != nil {
		return nil, err
	}
	r.mu.Lock()
	k = r.newest
	r.mu.Unlock()
	if k != nil {
		return k, nil
	}
	if _, err := r.rotate(ctx, now, 0); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.newest, nil
}

// verifier returns the key id names, reading the keys again (at most once
// a reloadEvery) when it is unknown.
func (r *keyRing) verifier(ctx context.Context, id string, now time.Time) (*signingKey, error) {
	r.mu.Lock()
	k, ok := r.keys[id]
	stale := now.Sub(r.loaded) >= reloadEvery
	r.mu.Unlock()
	if ok {
		return k, nil
	}
	if !stale {
		return nil, nil
	}
	if err := r.load(ctx, now); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys[id], nil
}

// rotate makes a new signing key, retires the one it replaces, and drops
// the keys retired more than keep ago: no token they signed is valid any
// more. The new key signs at once on this node, and on the others once
// they read the keys again (a token of a key they do not know makes them
// read; until then they keep signing with the previous key, which still
// verifies everywhere).
func (r *keyRing) rotate(ctx context.Context, now time.Time, keep time.Duration) (string, error) {
	seed := make([]byte, ed25519.SeedSize)
	rand.Read(seed)
	id := newKeyID(now)
	_, err := kv.Run(ctx, r.store, func(tx kv.Tx) error {
		it := tx.Scan(ctx, keyspace.SigningKeys(), kv.ScanOptions{})
		var old []*signingKey
		for it.Next() {
			k, err := decodeKey(it.Key(), it.Value())
			if err != nil {
				it.Close()
				return err
			}
			old = append(old, k)
		}
		it.Close()
		if err := it.Err(); err != nil {
			return err
		}
		for _, k := range old {
			switch {
			case k.RetiredAt.IsZero():
				k.RetiredAt = now
				if err := putKey(tx, k.ID, keyRecord{Seed: k.Private.Seed(), CreatedAt: k.CreatedAt, RetiredAt: now}); err != nil {
					return err
				}
			case now.Sub(k.RetiredAt) > keep:
				if err := tx.Clear(keyspace.SigningKey(k.ID)); err != nil {
					return err
				}
			}
		}
		return putKey(tx, id, keyRecord{Seed: seed, CreatedAt: now})
	})
	if err != nil {
		return "", err
	}
	return id, r.load(ctx, now)
}

func putKey(tx kv.Tx, id string, rec keyRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return tx.Set(keyspace.SigningKey(id), b)
}

// RotateSigningKey makes a new key sign tokens from now on. Tokens signed
// with the keys before it stay valid until they expire.
func (s *Service) RotateSigningKey(ctx context.Context) (string, error) {
	return s.keys.rotate(ctx, s.now(), s.cfg.RefreshTTL+time.Minute)
}
