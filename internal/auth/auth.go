// Package auth keeps who may do what: namespaces (tenants), applications
// with their secrets and roles, the keys that sign access tokens, and the
// tokens themselves. Records live in the kv space beside the catalog (see
// keyspace); the functions that change them take the caller's transaction,
// as the catalog's do, so that the operations decide how they run.
//
// An application authenticates with its id and secret (OAuth2 client
// credentials) and gets a short-lived access token, a JWT signed with an
// Ed25519 key of the store, which names its namespace and role, and a
// refresh token. A secret is stored only as a bcrypt hash. Verifying an
// access token needs no store read, but for a per-application check,
// cached for a few seconds, that the application still exists and its
// secret has not been rotated since the token was issued: deleting an
// application or rotating its secret revokes its tokens on every node
// within AppCacheTTL.
//
// Roles are ordered: a reader reads (documents, search, events,
// subscriptions, descriptions); an editor also writes documents and
// messages and changes databases and collections; an admin also manages
// its namespace's applications; the owner, a server-wide role, also
// manages namespaces and signing keys and may act on applications of every
// namespace.
package auth

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/kv"
)

// Role is what an application may do.
type Role string

// The roles, from least to most.
const (
	RoleReader Role = "reader"
	RoleEditor Role = "editor"
	RoleAdmin  Role = "admin"
	RoleOwner  Role = "owner"
)

var roleRank = map[Role]int{RoleReader: 1, RoleEditor: 2, RoleAdmin: 3, RoleOwner: 4}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// Allows reports whether r may do what needs role need.
func (r Role) Allows(need Role) bool { return r.Valid() && roleRank[r] >= roleRank[need] }

// ParseRole returns the role named s, or INVALID_ARGUMENT.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !r.Valid() {
		return "", apierror.Errorf(apierror.InvalidArgument, "unknown role '%s': want reader, editor, admin or owner", s)
	}
	return r, nil
}

// Config configures the service.
type Config struct {
	// Issuer and Audience are the tokens' iss and aud: a token issued for
	// another audience is refused. Default "folio" each.
	Issuer, Audience string
	// AccessTTL is how long an access token is valid (default 1h),
	// RefreshTTL a refresh token (default 24h).
	AccessTTL, RefreshTTL time.Duration
	// HashCost is bcrypt's cost for secrets (default bcrypt's own, 10).
	HashCost int
	// AppCacheTTL is how long a node trusts what it read of an
	// application when it verifies a token (default 5s).
	AppCacheTTL time.Duration
	// InvitationTTL is how long an invitation's code verifies (default
	// DefaultInvitationTTL).
	InvitationTTL time.Duration
	// FailedPerMinute bounds failed token requests per client id from
	// one address; an address gets twice as many across client ids
	// (default 10).
	FailedPerMinute int
	Logger          *slog.Logger
}

// Defaults of Config.
const (
	DefaultIssuer          = "folio"
	DefaultAccessTTL       = time.Hour
	DefaultRefreshTTL      = 24 * time.Hour
	DefaultAppCacheTTL     = 5 * time.Second
	DefaultFailedPerMinute = 10
)

// Service is a node's view of authentication: its configuration, the
// signing keys it has read, its cache of applications and the limiter of
// failed token requests.
type Service struct {
	cfg    Config
	store  kv.Store
	log    *slog.Logger
	keys   *keyRing
	apps   *appCache
	failed *limiter
	// verified are the access tokens this node has checked.
	verified verifiedTokens
	dummy    []byte // a hash to compare against when the client id is unknown
	nowFunc  func() time.Time
}

// New returns the service over store.
func New(store kv.Store, cfg Config) *Service {
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if cfg.Audience == "" {
		cfg.Audience = DefaultIssuer
	}
	if cfg.AccessTTL <= 0 {
		cfg.AccessTTL = DefaultAccessTTL
	}
	if cfg.RefreshTTL <= 0 {
		cfg.RefreshTTL = DefaultRefreshTTL
	}
	if cfg.AppCacheTTL <= 0 {
		cfg.AppCacheTTL = DefaultAppCacheTTL
	}
	if cfg.InvitationTTL <= 0 {
		cfg.InvitationTTL = DefaultInvitationTTL
	}
	if cfg.FailedPerMinute <= 0 {
		cfg.FailedPerMinute = DefaultFailedPerMinute
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, store: store, log: cfg.Logger, nowFunc: time.Now}
	s.keys = newKeyRing(store)
	s.apps = newAppCache(store, cfg.AppCacheTTL)
	s.failed = newLimiter(cfg.FailedPerMinute, time.Minute)
	s.dummy = s.hash("not a secret of any application")
	return s
}

func (s *Service) now() time.Time { return s.nowFunc() }

// AccessTTL is how long the access tokens it issues are valid.
func (s *Service) AccessTTL() time.Duration { return s.cfg.AccessTTL }

// Caller is who a verified token says makes a request.
type Caller struct {
	App       string // the application's id
	Namespace Namespace
	Role      Role
	// Project confines the caller to one project: its application's
	// (Application.Project); "" reaches the namespace.
	Project string
	// View narrows the applications a call sees to a Scope (the app key
	// calls'); the zero View is every one the caller may see.
	View Scope
}

// errUnauthenticated is the original's answer to a request without a
// bearer token.
var errUnauthenticated = apierror.Errorf(apierror.Unauthenticated, "request unauthenticated with bearer")

// ErrUnauthenticated is what a request that needs a token and has none gets.
func ErrUnauthenticated() error { return errUnauthenticated }

func unauthenticated(format string, args ...any) error {
	return apierror.Errorf(apierror.Unauthenticated, format, args...)
}

func corrupt(what string, key []byte, err error) error {
	return fmt.Errorf("auth: corrupt %s record %x: %w", what, key, err)
}
