package tenant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// The bounds of a metadata value and of its key. Metadata is for small
// settings a client keeps (a user's preferences, a tenant's flags), not
// for documents: a value past the bound belongs in a collection.
const (
	MaxMetadataKeyBytes   = 256
	MaxMetadataValueBytes = 64 << 10
)

// Kind says whose metadata a key names: the namespace's, shared by its
// applications, or one application's own (the API's "user" metadata).
type Kind int

const (
	NamespaceKind Kind = iota
	UserKind
)

// what names the kind in the original's messages.
func (k Kind) what() string {
	if k == UserKind {
		return "user"
	}
	return "namespace"
}

// MetadataKey is where a metadata value lives: its namespace, its
// application (for UserKind) and its name.
type MetadataKey struct {
	Kind Kind
	NS   int64
	App  string
	Name string
}

func (k MetadataKey) storeKey() []byte {
	if k.Kind == UserKind {
		return keyspace.UserMetadata(k.NS, k.App, k.Name)
	}
	return keyspace.NamespaceMetadata(k.NS, k.Name)
}

// CheckMetadataKey checks a metadata key's name: not empty, UTF-8, within
// MaxMetadataKeyBytes.
func CheckMetadataKey(name string) error {
	switch {
	case name == "":
		return apierror.Errorf(apierror.InvalidArgument, "invalid empty metadataKey")
	case len(name) > MaxMetadataKeyBytes:
		return apierror.Errorf(apierror.InvalidArgument, "metadataKey is %d bytes long; at most %d are allowed", len(name), MaxMetadataKeyBytes)
	case !utf8.ValidString(name):
		return apierror.Errorf(apierror.InvalidArgument, "metadataKey is not valid UTF-8")
	}
	return nil
}

// CheckMetadataValue checks a value to store: present, one JSON value,
// within MaxMetadataValueBytes.
func CheckMetadataValue(value []byte) error {
	switch {
	case len(value) == 0:
		return apierror.Errorf(apierror.InvalidArgument, "invalid nil payload: the request has no value")
	case len(value) > MaxMetadataValueBytes:
		return apierror.Errorf(apierror.InvalidArgument, "the value is %d bytes long; metadata values are at most %d bytes", len(value), MaxMetadataValueBytes)
	case !json.Valid(value):
		return apierror.Errorf(apierror.InvalidArgument, "the value is not one JSON value")
	}
	return nil
}

// GetMetadata returns the value under k, or nil if there is none: the
// original answered a missing key with no value, not an error.
func GetMetadata(ctx context.Context, r kv.Reader, k MetadataKey) ([]byte, error) {
	if err := CheckMetadataKey(k.Name); err != nil {
		return nil, err
	}
	v, err := r.Get(ctx, k.storeKey())
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	return v, err
}

// InsertMetadata stores a value under a key that holds none. A key that
// holds one is refused as the original refused it: INTERNAL, "Failed to
// insert user metadata." (its store's duplicate-key error, which its
// service turned into that message).
func InsertMetadata(ctx context.Context, tx kv.Tx, k MetadataKey, value []byte) error {
	if err := checkWrite(k, value); err != nil {
		return err
	}
	_, err := tx.Get(ctx, k.storeKey())
	switch {
	case err == nil:
		return apierror.Errorf(apierror.Internal, "Failed to insert %s metadata.", k.Kind.what())
	case !errors.Is(err, kv.ErrNotFound):
		return err
	}
	return tx.Set(k.storeKey(), value)
}

// UpdateMetadata stores a value under a key, whether it holds one or not:
// the original's update replaced or created alike.
func UpdateMetadata(_ context.Context, tx kv.Tx, k MetadataKey, value []byte) error {
	if err := checkWrite(k, value); err != nil {
		return err
	}
	return tx.Set(k.storeKey(), value)
}

func checkWrite(k MetadataKey, value []byte) error {
	if err := CheckMetadataKey(k.Name); err != nil {
		return err
	}
	if err := CheckMetadataValue(value); err != nil {
		return err
	}
	if k.NS <= 0 {
		return fmt.Errorf("tenant: metadata of namespace id %d", k.NS)
	}
	return nil
}

// ClearNamespace removes everything kept for namespace ns here: its
// metadata, its applications' and its quotas. Deleting the namespace
// calls it in the same transaction.
func ClearNamespace(tx kv.Tx, ns int64) error {
	return tx.ClearRange(keyspace.Tenant(ns))
}
