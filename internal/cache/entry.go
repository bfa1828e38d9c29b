package cache

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/foliodb/folio/internal/apierror"
)

// The bounds of a cache's keys and values.
const (
	// MaxKeyBytes bounds a key: it is part of the store's key, which the
	// store bounds.
	MaxKeyBytes = 1024
	// MaxValueBytes bounds a value: an entry is one value in the store,
	// whose bound is 1 MiB, expiry included.
	MaxValueBytes = 1_000_000
	// maxTTL bounds an expiry, so that now plus it stays far inside an
	// int64 of milliseconds (Redis refuses what overflows, as here).
	maxTTL = 100 * 365 * 24 * time.Hour
)

// entry is a cache entry as stored: when it expires (Unix milliseconds;
// 0: never) and its value.
type entry struct {
	expiresAt int64
	value     []byte
}

// live reports whether the entry is still there at now (Unix
// milliseconds). As in Redis, an entry expires once the clock is past its
// time: at its time exactly it is still there.
func (e entry) live(now int64) bool { return e.expiresAt == 0 || now <= e.expiresAt }

// encode lays the entry out as 8 bytes of expiry, big-endian, then the
// value.
func (e entry) encode() []byte {
	b := make([]byte, 8+len(e.value))
	binary.BigEndian.PutUint64(b, uint64(e.expiresAt))
	copy(b[8:], e.value)
	return b
}

var errBadEntry = errors.New("cache: an entry shorter than its expiry")

func decodeEntry(b []byte) (entry, error) {
	if len(b) < 8 {
		return entry{}, errBadEntry
	}
	return entry{expiresAt: int64(binary.BigEndian.Uint64(b)), value: b[8:]}, nil
}

// SetOptions are a set's conditions and expiry, as Redis's SET has them.
type SetOptions struct {
	// EX and PX are the entry's time to live, in seconds and in
	// milliseconds; 0 is none. EX wins if both are given, as in the
	// original. Without either, the cache's own TTL applies, if it has
	// one.
	EX, PX uint64
	// NX sets only a key that is absent, XX only one that is present; XX
	// wins if both are given, as in the original.
	NX, XX bool
}

// Errors of a set whose condition does not hold: the original answered
// both with a 500 naming them; Folio gives each its code.
var (
	errKeyNotFound = apierror.Errorf(apierror.NotFound, "key not found")
	errKeyExists   = apierror.Errorf(apierror.AlreadyExists, "key already exists")
)

// ErrKeyNotFound is a get's answer for a key that is absent or expired.
func ErrKeyNotFound() error { return errKeyNotFound }

// next is the entry a set leaves, given the live entry it finds (nil:
// none) at now (Unix milliseconds) and the cache's own TTL, or the error
// of a condition that does not hold.
func next(old *entry, value []byte, now int64, o SetOptions, ttl time.Duration) (entry, error) {
	switch {
	case o.XX && old == nil:
		return entry{}, errKeyNotFound
	case o.NX && !o.XX && old != nil:
		return entry{}, errKeyExists
	}
	var life time.Duration
	switch {
	case o.EX > 0:
		if o.EX > uint64(maxTTL/time.Second) {
			return entry{}, errExpiry
		}
		life = time.Duration(o.EX) * time.Second
	case o.PX > 0:
		if o.PX > uint64(maxTTL/time.Millisecond) {
			return entry{}, errExpiry
		}
		life = time.Duration(o.PX) * time.Millisecond
	default:
		life = ttl
	}
	e := entry{value: value}
	if life > 0 {
		e.expiresAt = now + life.Milliseconds()
	}
	return e, nil
}

var errExpiry = apierror.Errorf(apierror.InvalidArgument, "invalid expire time: at most %d seconds", int64(maxTTL/time.Second))

// checkEntry checks a key and a value against the bounds.
func checkEntry(key string, value []byte) error {
	switch {
	case key == "":
		return apierror.Errorf(apierror.InvalidArgument, "key is empty")
	case len(key) > MaxKeyBytes:
		return apierror.Errorf(apierror.InvalidArgument, "key is %d bytes: at most %d", len(key), MaxKeyBytes)
	case len(value) > MaxValueBytes:
		return apierror.Errorf(apierror.InvalidArgument, "value is %d bytes: at most %d", len(value), MaxValueBytes)
	}
	return nil
}
