package auth

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/keyspace"
	"github.com/foliodb/folio/internal/kv"
)

// Application is an application as the API shows it. Secret is set only
// in what creating it or rotating its secret returns.
type Application struct {
	ID          string
	Name        string
	Description string
	Secret      string
	Namespace   Namespace
	Role        Role
	Project     string // the one project (database) an app key reaches; "" for the namespace
	Email       string // of whom an invitation made it a user, if one did
	CreatedAt   time.Time
	CreatedBy   string
	UpdatedAt   time.Time
	UpdatedBy   string
	// WithoutAuth: see appRecord.
	WithoutAuth bool
}

type appRecord struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	NS          string    `json:"namespace"`
	Role        Role      `json:"role"`
	Project     string    `json:"project,omitempty"` // see Application.Project
	Email       string    `json:"email,omitempty"`   // see Application.Email
	SecretHash  []byte    `json:"secret_hash"`
	SecretGen   int64     `json:"secret_gen"` // bumped by every rotation: older tokens are revoked
	CreatedAt   time.Time `json:"created_at"`
	CreatedBy   string    `json:"created_by"`
	UpdatedAt   time.Time `json:"updated_at,omitzero"`
	UpdatedBy   string    `json:"updated_by,omitempty"`
	// CreatedByOwner and UpdatedByOwner: CreatedBy and UpdatedBy have the
	// owner's role, and other callers see "owner" instead (seenBy).
	CreatedByOwner bool `json:"created_by_owner,omitempty"`
	UpdatedByOwner bool `json:"updated_by_owner,omitempty"`
	// WithoutAuth marks an application made, changed (its role raised,
	// say) or given its secret by the anonymous caller of a server without
	// authentication: anyone who could reach the server may hold its
	// secret, or have given it its role, so a start with authentication
	// refuses it (MadeWithoutAuth).
	WithoutAuth bool `json:"without_auth,omitempty"`
	// OwnerFile marks the owner application EnsureOwner made from the
	// owner file: the one application rightly made by nobody (CreatedBy
	// "") but an anonymous caller's.
	OwnerFile bool `json:"owner_file,omitempty"`
}

// madeWithoutAuth reports whether the anonymous caller of a server
// without authentication may have made the application, changed it or
// given it its secret. Versions before WithoutAuth stored an anonymous
// caller's application with no creator and no mark, as they stored the
// owner made from the owner file, whose record they made as EnsureOwner
// still does (its name and description tell it).
func (r appRecord) madeWithoutAuth() bool {
	return r.WithoutAuth || (r.CreatedBy == "" && !r.OwnerFile && !r.ownerBeforeTheMark())
}

// ownerBeforeTheMark reports whether r is the owner application as
// versions before OwnerFile made it from the owner file.
func (r appRecord) ownerBeforeTheMark() bool {
	return r.CreatedBy == "" && r.Role == RoleOwner && r.NS == Default.Name && r.Name == ownerName && r.Description == ownerDescription
}

// Limits of an application's fields.
const (
	MaxAppNameBytes        = 256
	MaxAppDescriptionBytes = 1024
	// A secret chosen by an operator (the owner's, at first start) must
	// fit bcrypt, which reads 72 bytes at most.
	minSecretBytes = 16
	maxSecretBytes = 72
)

// NewApplication is what creating an application takes.
type NewApplication struct {
	Name, Description string
	Namespace         Namespace
	Role              Role
	Project           string // see Application.Project
	Email             string // see Application.Email
	CreatedBy         string // the caller's application id, "" for the server itself
	CreatedByOwner    bool   // the caller has the owner's role
	// WithoutAuth: the caller is the anonymous one of a server without
	// authentication.
	WithoutAuth bool
	// OwnerFile: the owner application, made from the owner file.
	OwnerFile bool
	// ID and Secret, if set, are used instead of generated ones (the
	// owner's credential at first start).
	ID, Secret string
}

func checkAppFields(name, description string) error {
	switch {
	case name == "":
		return apierror.Errorf(apierror.InvalidArgument, "an application needs a name")
	case len(name) > MaxAppNameBytes || !utf8.ValidString(name):
		return apierror.Errorf(apierror.InvalidArgument, "the application name must be valid UTF-8 of at most %d bytes", MaxAppNameBytes)
	case len(description) > MaxAppDescriptionBytes || !utf8.ValidString(description):
		return apierror.Errorf(apierror.InvalidArgument, "the application description must be valid UTF-8 of at most %d bytes", MaxAppDescriptionBytes)
	}
	return nil
}

// CreateApplication creates an application and returns it with its
// secret, which is shown this once.
func (s *Service) CreateApplication(ctx context.Context, tx kv.Tx, a NewApplication) (*Application, error) {
	if err := checkAppFields(a.Name, a.Description); err != nil {
		return nil, err
	}
	if !a.Role.Valid() {
		return nil, apierror.Errorf(apierror.InvalidArgument, "unknown role '%s'", a.Role)
	}
	if err := checkScope(a.Project, a.Role); err != nil {
		return nil, err
	}
	if a.ID == "" {
		a.ID = newAppID()
	}
	if a.Secret == "" {
		a.Secret = newSecret()
	} else if len(a.Secret) < minSecretBytes || len(a.Secret) > maxSecretBytes {
		return nil, apierror.Errorf(apierror.InvalidArgument, "a secret must have %d to %d bytes", minSecretBytes, maxSecretBytes)
	}
	if _, err := tx.Get(ctx, keyspace.Application(a.ID)); err == nil {
		return nil, apierror.Errorf(apierror.AlreadyExists, "application '%s' already exists", a.ID)
	} else if !errors.Is(err, kv.ErrNotFound) {
		return nil, err
	}
	rec := appRecord{Name: a.Name, Description: a.Description, NS: a.Namespace.Name, Role: a.Role, Project: a.Project, Email: a.Email,
		SecretHash: s.hash(a.Secret), SecretGen: 1, CreatedAt: s.now().UTC(), CreatedBy: a.CreatedBy,
		CreatedByOwner: a.CreatedByOwner, WithoutAuth: a.WithoutAuth, OwnerFile: a.OwnerFile}
	if err := putApp(tx, a.ID, rec); err != nil {
		return nil, err
	}
	app := rec.application(a.ID, a.Namespace)
	app.Secret = a.Secret
	return app, nil
}

func (r appRecord) application(id string, ns Namespace) *Application {
	return &Application{ID: id, Name: r.Name, Description: r.Description, Namespace: ns, Role: r.Role, Project: r.Project, Email: r.Email,
		CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, UpdatedAt: r.UpdatedAt, UpdatedBy: r.UpdatedBy,
		WithoutAuth: r.WithoutAuth}
}

// ownerAlias is what created_by and updated_by show callers other than
// the owner where the owner made or changed an application: its id is half
// of its credentials, and no tenant's business.
const ownerAlias = "owner"

// seenBy is the application as by may see it.
func (r appRecord) seenBy(by Caller, id string, ns Namespace) *Application {
	a := r.application(id, ns)
	if by.Role != RoleOwner {
		if r.CreatedByOwner && a.CreatedBy != "" {
			a.CreatedBy = ownerAlias
		}
		if r.UpdatedByOwner && a.UpdatedBy != "" {
			a.UpdatedBy = ownerAlias
		}
	}
	return a
}

// updatedBy stamps rec as changed now by by.
func (s *Service) updatedBy(rec *appRecord, by Caller) {
	rec.UpdatedAt, rec.UpdatedBy, rec.UpdatedByOwner = s.now().UTC(), by.App, by.Role == RoleOwner
}

func putApp(tx kv.Tx, id string, rec appRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return tx.Set(keyspace.Application(id), b)
}

func getApp(ctx context.Context, r kv.Reader, id string) (appRecord, bool, error) {
	b, err := r.Get(ctx, keyspace.Application(id))
	if errors.Is(err, kv.ErrNotFound) {
		return appRecord{}, false, nil
	}
	if err != nil {
		return appRecord{}, false, err
	}
	var rec appRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return appRecord{}, false, corrupt("application", keyspace.Application(id), err)
	}
	return rec, true, nil
}

// visibleApp reads the application id as the caller sees it: in the
// caller's namespace only, unless the caller is the owner. Another
// namespace's application is NOT_FOUND, as a missing one.
func visibleApp(ctx context.Context, tx kv.Tx, by Caller, id string) (appRecord, Namespace, error) {
	rec, ok, err := getApp(ctx, tx, id)
	if err != nil {
		return appRecord{}, Namespace{}, err
	}
	if !ok || !by.sees(rec) {
		return appRecord{}, Namespace{}, apierror.Errorf(apierror.NotFound, "application '%s' doesn't exist", id)
	}
	ns, err := LookupNamespace(ctx, tx, rec.NS)
	return rec, ns, err
}

// ApplicationUpdate is what updating an application changes: its name
// and description, and its role if Role is set.
type ApplicationUpdate struct {
	ID, Name, Description string
	Role                  Role
	// Partial keeps the name, or the description, where the update's is
	// empty, as the app key calls do.
	Partial bool
}

// UpdateApplication changes an application the caller may see.
func (s *Service) UpdateApplication(ctx context.Context, tx kv.Tx, by Caller, u ApplicationUpdate) (*Application, error) {
	rec, ns, err := visibleApp(ctx, tx, by, u.ID)
	if err != nil {
		return nil, err
	}
	if u.Partial {
		u.Name = cmp.Or(u.Name, rec.Name)
		u.Description = cmp.Or(u.Description, rec.Description)
	}
	if err := checkAppFields(u.Name, u.Description); err != nil {
		return nil, err
	}
	if u.Role != "" {
		if err := canGrant(by, u.Role); err != nil {
			return nil, err
		}
		if err := checkScope(rec.Project, u.Role); err != nil {
			return nil, err
		}
		rec.Role = u.Role
	}
	rec.Name, rec.Description = u.Name, u.Description
	s.updatedBy(&rec, by)
	// Whoever could reach the server may have changed it: raised the role
	// of an application whose secret it holds, say. A signed-in caller's
	// update does not clear the mark: unlike a rotation, it leaves the
	// secret as it was.
	if by.App == "" {
		rec.WithoutAuth = true
	}
	if err := putApp(tx, u.ID, rec); err != nil {
		return nil, err
	}
	s.apps.forget(u.ID)
	return rec.seenBy(by, u.ID, ns), nil
}

// canGrant checks that by may give an application role r: nobody grants
// more than it has.
func canGrant(by Caller, r Role) error {
	if !r.Valid() {
		return apierror.Errorf(apierror.InvalidArgument, "unknown role '%s': want reader, editor, admin or owner", r)
	}
	if !by.Role.Allows(r) {
		return apierror.Errorf(apierror.PermissionDenied, "an application with role '%s' cannot grant role '%s'", by.Role, r)
	}
	return nil
}

// CanGrant is canGrant for the operations, which check it before they
// look up the namespace an application is created in.
func CanGrant(by Caller, r Role) error { return canGrant(by, r) }

// RotateSecret gives an application the caller may see a new secret,
// returned this once; tokens issued with the old one stop working.
func (s *Service) RotateSecret(ctx context.Context, tx kv.Tx, by Caller, id string) (*Application, error) {
	rec, ns, err := visibleApp(ctx, tx, by, id)
	if err != nil {
		return nil, err
	}
	secret := newSecret()
	rec.SecretHash = s.hash(secret)
	rec.SecretGen++
	s.updatedBy(&rec, by)
	// The new secret is known to whoever asked: to anyone, if nobody
	// signed in (ops gives a server without authentication's callers no
	// application).
	rec.WithoutAuth = by.App == ""
	if err := putApp(tx, id, rec); err != nil {
		return nil, err
	}
	s.apps.forget(id)
	app := rec.seenBy(by, id, ns)
	app.Secret = secret
	return app, nil
}

// DeleteApplication deletes an application the caller may see, with its
// metadata; its tokens stop working.
func (s *Service) DeleteApplication(ctx context.Context, tx kv.Tx, by Caller, id string) error {
	_, ns, err := visibleApp(ctx, tx, by, id)
	if err != nil {
		return err
	}
	s.apps.forget(id)
	// Its metadata goes with it: no later application has its id.
	if err := tx.ClearRange(keyspace.ApplicationMetadata(ns.ID, id)); err != nil {
		return err
	}
	return tx.Clear(keyspace.Application(id))
}

// DeleteProjectKeys deletes the app keys of project (a database of
// namespace ns) with their metadata, as deleting the project does: a
// project made later under its name is another's, which they must not
// reach. It returns their ids, for Forget once tx has committed.
func (s *Service) DeleteProjectKeys(ctx context.Context, tx kv.Tx, ns Namespace, project string) ([]string, error) {
	it := tx.Scan(ctx, keyspace.Applications(), kv.ScanOptions{})
	defer it.Close()
	var ids []string
	for it.Next() {
		var rec appRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, corrupt("application", it.Key(), err)
		}
		if rec.NS != ns.Name || rec.Project != project {
			continue
		}
		id, err := keyspace.LastString(it.Key())
		if err != nil {
			return nil, corrupt("application", it.Key(), err)
		}
		ids = append(ids, id)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := tx.ClearRange(keyspace.ApplicationMetadata(ns.ID, id)); err != nil {
			return nil, err
		}
		if err := tx.Clear(keyspace.Application(id)); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// Forget drops this node's cached records of the applications ids, deleted
// by a committed transaction, so that their tokens stop here at once.
func (s *Service) Forget(ids []string) {
	for _, id := range ids {
		s.apps.forget(id)
	}
}

// ListApplications returns the applications of the caller's namespace
// (every namespace's for the owner), in id order, without secrets.
func (s *Service) ListApplications(ctx context.Context, tx kv.Tx, by Caller) ([]*Application, error) {
	return s.listApplications(ctx, tx, by, func(appRecord) bool { return true })
}

// listApplications is ListApplications of the records keep keeps.
func (s *Service) listApplications(ctx context.Context, tx kv.Tx, by Caller, keep func(appRecord) bool) ([]*Application, error) {
	it := tx.Scan(ctx, keyspace.Applications(), kv.ScanOptions{})
	defer it.Close()
	var out []*Application
	namespaces := map[string]Namespace{}
	for it.Next() {
		var rec appRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return nil, corrupt("application", it.Key(), err)
		}
		if !by.sees(rec) || !keep(rec) {
			continue
		}
		id, err := keyspace.LastString(it.Key())
		if err != nil {
			return nil, corrupt("application", it.Key(), err)
		}
		ns, ok := namespaces[rec.NS]
		if !ok {
			if ns, err = LookupNamespace(ctx, tx, rec.NS); err != nil {
				return nil, err
			}
			namespaces[rec.NS] = ns
		}
		out = append(out, rec.seenBy(by, id, ns))
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// MadeWithoutAuth returns the applications made, changed or given their
// secret while the server ran without authentication (appRecord's
// madeWithoutAuth), in id order.
func (s *Service) MadeWithoutAuth(ctx context.Context) ([]*Application, error) {
	var out []*Application
	_, err := kv.Run(ctx, s.store, func(tx kv.Tx) (err error) {
		out, err = s.listApplications(ctx, tx, Caller{Role: RoleOwner}, appRecord.madeWithoutAuth)
		return err
	})
	return out, err
}

// HasOwner reports whether an application with the owner's role exists.
func HasOwner(ctx context.Context, tx kv.Tx) (bool, error) {
	it := tx.Scan(ctx, keyspace.Applications(), kv.ScanOptions{})
	defer it.Close()
	for it.Next() {
		var rec appRecord
		if err := json.Unmarshal(it.Value(), &rec); err != nil {
			return false, corrupt("application", it.Key(), err)
		}
		if rec.Role == RoleOwner {
			return true, nil
		}
	}
	return false, it.Err()
}

func (s *Service) hash(secret string) []byte {
	cost := s.cfg.HashCost
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(secret), cost)
	if err != nil {
		// Only a secret over 72 bytes or a cost out of range fails: both
		// are checked before.
		panic("auth: hash a secret: " + err.Error())
	}
	return h
}

func newAppID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// appCache remembers what verifying a token needs of an application (that
// it exists, its secret's generation, its namespace and role) for a few
// seconds, so that a request reads no application record.
type appCache struct {
	store kv.Store
	ttl   time.Duration
	mu    sync.Mutex
	apps  map[string]cachedApp
}

type cachedApp struct {
	found bool
	rec   appRecord
	read  time.Time
}

// maxCachedApps bounds the cache; past it the cache starts over.
const maxCachedApps = 10_000

func newAppCache(store kv.Store, ttl time.Duration) *appCache {
	return &appCache{store: store, ttl: ttl, apps: map[string]cachedApp{}}
}

// get returns the application's record as read at most ttl ago.
func (c *appCache) get(ctx context.Context, id string, now time.Time) (appRecord, bool, error) {
	c.mu.Lock()
	e, ok := c.apps[id]
	c.mu.Unlock()
	if ok && now.Sub(e.read) < c.ttl {
		return e.rec, e.found, nil
	}
	var rec appRecord
	var found bool
	_, err := kv.Run(ctx, c.store, func(tx kv.Tx) error {
		var err error
		rec, found, err = getApp(ctx, tx.Snapshot(), id)
		return err
	})
	if err != nil {
		return appRecord{}, false, err
	}
	c.mu.Lock()
	if len(c.apps) >= maxCachedApps {
		clear(c.apps)
	}
	c.apps[id] = cachedApp{found: found, rec: rec, read: now}
	c.mu.Unlock()
	return rec, found, nil
}

// forget drops an application this node just changed, so that the change
// applies here at once (other nodes see it within ttl).
func (c *appCache) forget(id string) {
	c.mu.Lock()
	delete(c.apps, id)
	c.mu.Unlock()
}
