package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/status"
)

// Namespace is a tenant: the databases of one are invisible to another.
type Namespace struct {
	ID        int64
	Name      string
	CreatedAt time.Time
}

// DefaultNamespaceName is the name of keyspace.DefaultNamespace, which
// always exists (the original's name for it).
const DefaultNamespaceName = "default_namespace"

// Default is the namespace every database belongs to without
// authentication, and the owner's.
var Default = Namespace{ID: keyspace.DefaultNamespace, Name: DefaultNamespaceName}

type namespaceRecord struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

var namespaceName = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_-]{0,63}$`)

// CreateNamespace creates a namespace. id 0 takes the lowest id above
// every namespace's; otherwise it must be free, and positive (the API
// carries ids as int32).
func CreateNamespace(ctx context.Context, tx kv.Tx, name string, id int64) (Namespace, error) {
	if !namespaceName.MatchString(name) {
		return Namespace{}, status.Errorf(status.InvalidArgument, "invalid namespace name '%s': a letter, then up to 63 letters, digits, '_' or '-'", name)
	}
	if id < 0 || id > math.MaxInt32 {
		return Namespace{}, status.Errorf(status.InvalidArgument, "invalid namespace id %d: want 1 to %d", id, math.MaxInt32)
	}
	if _, err := LookupNamespace(ctx, tx, name); err == nil {
		return Namespace{}, status.Errorf(status.AlreadyExists, "namespace '%s' already exists", name)
	} else if status.CodeOf(err) != status.NotFound {
		return Namespace{}, err
	}
	if id == 0 {
		all, err := ListNamespaces(ctx, tx)
		if err != nil {
			return Namespace{}, err
		}
		for _, ns := range all {
			id = max(id, ns.ID)
		}
		id++
	}
	if id == keyspace.DefaultNamespace {
		return Namespace{}, status.Errorf(status.AlreadyExists, "namespace id %d is taken by '%s'", id, DefaultNamespaceName)
	}
	taken, err := tx.Get(ctx, keyspace.NamespaceID(id))
	switch {
	case err == nil:
		return Namespace{}, status.Errorf(status.AlreadyExists, "namespace id %d is taken by '%s'", id, taken)
	case !errors.Is(err, kv.ErrNotFound):
		return Namespace{}, err
	}
	ns := Namespace{ID: id, Name: name, CreatedAt: time.Now().UTC()}
	b, err := json.Marshal(namespaceRecord{ID: id, CreatedAt: ns.CreatedAt})
	if err != nil {
		return Namespace{}, err
	}
	if err := tx.Set(keyspace.Namespace(name), b); err != nil {
		return Namespace{}, err
	}
	return ns, tx.Set(keyspace.NamespaceID(id), []byte(name))
}

// LookupNamespace returns the namespace named name, or NOT_FOUND.
func LookupNamespace(ctx context.Context, r kv.Reader, name string) (Namespace, error) {
	if name == DefaultNamespaceName {
		return Default, nil
	}
	b, err := r.Get(ctx, keyspace.Namespace(name))
	if errors.Is(err, kv.ErrNotFound) {
		return Namespace{}, status.Errorf(status.NotFound, "namespace '%s' doesn't exist", name)
	}
	if err != nil {
		return Namespace{}, err
	}
	var rec namespaceRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return Namespace{}, corrupt("namespace", keyspace.Namespace(name), err)
	}
	return Namespace{ID: rec.ID, Name: name, CreatedAt: rec.CreatedAt}, nil
}

// ListNamespaces returns every namespace, the default one first, then the
// others in name order.
func ListNamespaces(ctx context.Context, tx kv.Tx) ([]Namespace, error) {
	out := []Namespace{Default}
	it := tx.Scan(ctx, keyspace.Namespaces(), kv.ScanOptions{})
	defer it.Close()
	for it.Next() {
		var rec namespaceRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, corrupt("namespace", it.Key(), err)
		}
		name, err := keyspace.LastString(it.Key())
		if err != nil {
			return nil, fmt.Errorf("auth: namespace key %x: %w", it.Key(), err)
		}
		out = append(out, Namespace{ID: rec.ID, Name: name, CreatedAt: rec.CreatedAt})
	}
	return out, it.Err()
}
