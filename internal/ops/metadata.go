package ops

import (
	"context"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/tenant"
)

// MetadataRequest names a metadata value (Key) and, to write, the value:
// one JSON value, kept as sent.
type MetadataRequest struct {
	Malformed error // see Malformed
	Key       string
	Value     []byte
}

// Metadata is a metadata value as the calls answer it: Value is nil for a
// key that holds none. App is the application whose value it is (user
// metadata; "" for the namespace's, or an anonymous caller's).
type Metadata struct {
	Key         string
	App         string
	NamespaceID int64
	Value       []byte
}

// The API's "user" metadata is the calling application's own: its id is
// the user the original's calls keyed it by. The namespace's is shared by
// its applications.

// GetUserMetadata reads the caller's value under req.Key.
func (o *Ops) GetUserMetadata(ctx context.Context, c Caller, req MetadataRequest) (_ *Metadata, err error) {
	ctx, op, err := o.open(ctx, c, "GetUserMetadata")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.getMetadata(ctx, c, tenant.UserKind, req)
}

// InsertUserMetadata stores a value for the caller under a key that holds
// none.
func (o *Ops) InsertUserMetadata(ctx context.Context, c Caller, req MetadataRequest) (_ *Metadata, err error) {
	ctx, op, err := o.open(ctx, c, "InsertUserMetadata")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.writeMetadata(ctx, c, tenant.UserKind, req, tenant.InsertMetadata)
}

// UpdateUserMetadata stores a value for the caller under a key, whether
// it held one or not.
func (o *Ops) UpdateUserMetadata(ctx context.Context, c Caller, req MetadataRequest) (_ *Metadata, err error) {
	ctx, op, err := o.open(ctx, c, "UpdateUserMetadata")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.writeMetadata(ctx, c, tenant.UserKind, req, tenant.UpdateMetadata)
}

// GetNamespaceMetadata reads the caller's namespace's value under req.Key.
func (o *Ops) GetNamespaceMetadata(ctx context.Context, c Caller, req MetadataRequest) (_ *Metadata, err error) {
	ctx, op, err := o.open(ctx, c, "GetNamespaceMetadata")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.getMetadata(ctx, c, tenant.NamespaceKind, req)
}

// InsertNamespaceMetadata stores a value for the caller's namespace under
// a key that holds none.
func (o *Ops) InsertNamespaceMetadata(ctx context.Context, c Caller, req MetadataRequest) (_ *Metadata, err error) {
	ctx, op, err := o.open(ctx, c, "InsertNamespaceMetadata")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.writeMetadata(ctx, c, tenant.NamespaceKind, req, tenant.InsertMetadata)
}

// UpdateNamespaceMetadata stores a value for the caller's namespace under
// a key, whether it held one or not.
func (o *Ops) UpdateNamespaceMetadata(ctx context.Context, c Caller, req MetadataRequest) (_ *Metadata, err error) {
	ctx, op, err := o.open(ctx, c, "UpdateNamespaceMetadata")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.writeMetadata(ctx, c, tenant.NamespaceKind, req, tenant.UpdateMetadata)
}

func metadataKey(c Caller, kind tenant.Kind, name string) tenant.MetadataKey {
	k := tenant.MetadataKey{Kind: kind, NS: c.ns(), Name: name}
	if kind == tenant.UserKind {
		k.App = c.App
	}
	return k
}

func (o *Ops) getMetadata(ctx context.Context, c Caller, kind tenant.Kind, req MetadataRequest) (*Metadata, error) {
	if err := tenant.CheckMetadataKey(req.Key); err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	k := metadataKey(c, kind, req.Key)
	var value []byte
	err := o.run(ctx, func(tx kv.Tx) (err error) {
		value, err = tenant.GetMetadata(ctx, tx, k)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Metadata{Key: req.Key, App: k.App, NamespaceID: k.NS, Value: value}, nil
}

func (o *Ops) writeMetadata(ctx context.Context, c Caller, kind tenant.Kind, req MetadataRequest, write func(context.Context, kv.Tx, tenant.MetadataKey, []byte) error) (*Metadata, error) {
	if err := tenant.CheckMetadataKey(req.Key); err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	// The namespace's values are the whole namespace's, as its
	// applications and invitations are: a key of one project reads them
	// but does not change them.
	if kind == tenant.NamespaceKind && c.OnlyProject != "" {
		return nil, apierror.Errorf(apierror.PermissionDenied, "an app key of project '%s' cannot change the namespace's metadata", c.OnlyProject)
	}
	k := metadataKey(c, kind, req.Key)
	err := o.run(ctx, func(tx kv.Tx) error { return write(ctx, tx, k, req.Value) })
	if err != nil {
		return nil, err
	}
	return &Metadata{Key: req.Key, App: k.App, NamespaceID: k.NS, Value: req.Value}, nil
}
