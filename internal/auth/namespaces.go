package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
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
		return Namespace{}, apierror.Errorf(apierror.InvalidArgument, "invalid namespace name '%s': a letter, then up to 63 letters, digits, '_' or '-'", name)
	}
	if id < 0 || id > math.MaxInt32 {
		return Namespace{}, apierror.Errorf(apierror.InvalidArgument, "invalid namespace id %d: want 1 to %d", id, math.MaxInt32)
	}
	if _, err := LookupNamespace(ctx, tx, name); err == nil {
		return Namespace{}, apierror.Errorf(apierror.AlreadyExists, "namespace '%s' already exists", name)
	} else if apierror.CodeOf(err) != apierror.NotFound {
		return Namespace{}, err
	}
	pick := id == 0
	if pick {
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
		return Namespace{}, apierror.Errorf(apierror.AlreadyExists, "namespace id %d is taken by '%s'", id, DefaultNamespaceName)
	}
	for {
		taken, err := tx.Get(ctx, keyspace.NamespaceID(id))
		switch {
		case errors.Is(err, kv.ErrNotFound):
		case err != nil:
			return Namespace{}, err
		case pick && string(taken) == deletedNamespace:
			// A deleted namespace's id: the next one up.
			id++
			continue
		case string(taken) == deletedNamespace:
			return Namespace{}, apierror.Errorf(apierror.AlreadyExists, "namespace id %d was a deleted namespace's: ids are not reused", id)
		default:
			return Namespace{}, apierror.Errorf(apierror.AlreadyExists, "namespace id %d is taken by '%s'", id, taken)
		}
		break
	}
	if id > math.MaxInt32 {
		return Namespace{}, apierror.Errorf(apierror.ResourceExhausted, "no namespace id is left below %d", math.MaxInt32)
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

// DeleteNamespace deletes namespace name, which must hold no databases
// (holds tells, from the catalog) and no applications: a namespace is
// emptied by its own calls first, so that nothing is deleted by surprise.
// Its id stays reserved (deletedNamespace under NamespaceID) and is never
// given again, so that nothing left keyed by it can reach a namespace
// made later.
func DeleteNamespace(ctx context.Context, tx kv.Tx, name string, holds func(Namespace) ([]string, error)) error {
	if name == DefaultNamespaceName {
		return apierror.Errorf(apierror.InvalidArgument, "namespace '%s' cannot be deleted", name)
	}
	ns, err := LookupNamespace(ctx, tx, name)
	if err != nil {
		return err
	}
	dbs, err := holds(ns)
	if err != nil {
		return err
	}
	if len(dbs) > 0 {
		return apierror.Errorf(apierror.FailedPrecondition, "namespace '%s' holds %d database(s) (%s): drop them first", name, len(dbs), listSome(dbs))
	}
	it := tx.Scan(ctx, keyspace.Applications(), kv.ScanOptions{})
	defer it.Close()
	var apps []string
	for it.Next() {
		var rec appRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return corrupt("application", it.Key(), err)
		}
		if rec.NS == name {
			id, _ := keyspace.LastString(it.Key())
			apps = append(apps, id)
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(apps) > 0 {
		return apierror.Errorf(apierror.FailedPrecondition, "namespace '%s' has %d application(s) (%s): delete them first", name, len(apps), listSome(apps))
	}
	// Its invitations go with it: they are keyed by its name, which a
	// namespace made later may have, and a code handed out now must not
	// let anyone into that one.
	var invitations [][]byte
	if err := scanInvitations(ctx, tx, keyspace.Invitations(), func(key []byte, rec invitationRecord) error {
		if rec.NS == name {
			invitations = append(invitations, append([]byte(nil), key...))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, key := range invitations {
		if err := tx.Clear(key); err != nil {
			return err
		}
	}
	if err := tx.Clear(keyspace.Namespace(name)); err != nil {
		return err
	}
	return tx.Set(keyspace.NamespaceID(ns.ID), []byte(deletedNamespace))
}

// deletedNamespace holds a deleted namespace's id (NamespaceID's value,
// otherwise the name, which cannot be this).
const deletedNamespace = "-"

// listSome joins the first few of names for a message.
func listSome(names []string) string {
	const some = 5
	if len(names) <= some {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:some], ", ") + ", …"
}

// LookupNamespace returns the namespace named name, or NOT_FOUND.
func LookupNamespace(ctx context.Context, r kv.Reader, name string) (Namespace, error) {
	if name == DefaultNamespaceName {
		return Default, nil
	}
	b, err := r.Get(ctx, keyspace.Namespace(name))
	if errors.Is(err, kv.ErrNotFound) {
		return Namespace{}, apierror.Errorf(apierror.NotFound, "namespace '%s' doesn't exist", name)
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
