package ops

import (
	"context"
	"time"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/tenant"
)

// The calls that manage namespaces, applications and signing keys, and the
// token endpoint. Namespaces and keys are the owner's; applications an
// admin's, in its namespace (the owner's in any).

// What the transports see of auth's types: they import ops alone.
type (
	Namespace   = auth.Namespace
	Application = auth.Application
	Tokens      = auth.Tokens
)

// The grants of the token endpoint.
const (
	GrantClientCredentials = auth.GrantClientCredentials
	GrantRefreshToken      = auth.GrantRefreshToken
)

// CreateNamespaceRequest creates a namespace; ID 0 lets the server pick.
type CreateNamespaceRequest struct {
	Malformed error // see Malformed
	Name      string
	ID        int64
}

// CreateNamespace creates a namespace.
func (o *Ops) CreateNamespace(ctx context.Context, c Caller, req CreateNamespaceRequest) (_ *Namespace, err error) {
	ctx, op, err := o.open(ctx, c, "CreateNamespace")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	var ns auth.Namespace
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		ns, err = auth.CreateNamespace(ctx, tx, req.Name, req.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	o.log.Info("namespace created", "namespace", ns.Name, "id", ns.ID, "by", c.App)
	return &ns, nil
}

// ListNamespaces lists the namespaces, the default one first.
func (o *Ops) ListNamespaces(ctx context.Context, c Caller) (_ []Namespace, err error) {
	ctx, op, err := o.open(ctx, c, "ListNamespaces")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	var out []auth.Namespace
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		out, err = auth.ListNamespaces(ctx, tx)
		return err
	})
	return out, err
}

// DeleteNamespace deletes a namespace that holds no databases and no
// applications (auth.DeleteNamespace); the default one stays.
func (o *Ops) DeleteNamespace(ctx context.Context, c Caller, name string) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteNamespace")
	defer op.end(&err)
	if err != nil {
		return err
	}
	var id int64
	err = o.run(ctx, func(tx kv.Tx) error {
		err := auth.DeleteNamespace(ctx, tx, name, func(ns auth.Namespace) ([]string, error) {
			id = ns.ID
			// Branches count too: they are databases a user made.
			dbs, err := o.catalog.AllDatabasesOf(ctx, tx, ns.ID)
			names := make([]string, len(dbs))
			for i, d := range dbs {
				names[i] = d.Name
			}
			return names, err
		})
		if err != nil {
			return err
		}
		// Its metadata and quotas go with it: nothing is left keyed by
		// an id never given again.
		return tenant.ClearNamespace(tx, id)
	})
	if err != nil {
		return err
	}
	o.quotas.Set(id, tenant.Quota{}, time.Now())
	o.rates.Forget(id)
	o.log.Info("namespace deleted", "namespace", name, "by", c.App)
	return nil
}

// CreateApplicationRequest creates an application. Role and Namespace are
// Folio's: the original's request has neither (its applications could do
// everything in their namespace). Role defaults to editor (data and
// schema), Namespace to the caller's; only the owner names another.
type CreateApplicationRequest struct {
	Malformed         error // see Malformed
	Name, Description string
	Role              string
	Namespace         string
}

// DefaultApplicationRole is the role of an application created without
// one: what the original's applications could do, short of managing other
// applications.
const DefaultApplicationRole = auth.RoleEditor

// CreateApplication creates an application and returns it with its
// secret, shown this once.
func (o *Ops) CreateApplication(ctx context.Context, c Caller, req CreateApplicationRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "CreateApplication")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	by := o.principal(c)
	if by.Project != "" {
		return nil, apierror.Errorf(apierror.PermissionDenied, "an app key of project '%s' cannot create applications of the whole namespace", by.Project)
	}
	role := DefaultApplicationRole
	if req.Role != "" {
		role = auth.Role(req.Role)
	}
	if err := auth.CanGrant(by, role); err != nil {
		return nil, err
	}
	if req.Namespace != "" && req.Namespace != by.Namespace.Name && by.Role != auth.RoleOwner {
		return nil, apierror.Errorf(apierror.PermissionDenied, "only the owner creates applications in another namespace")
	}
	var app *auth.Application
	err = o.run(ctx, func(tx kv.Tx) error {
		ns := by.Namespace
		if req.Namespace != "" {
			var err error
			if ns, err = auth.LookupNamespace(ctx, tx, req.Namespace); err != nil {
				return err
			}
		}
		var err error
		app, err = o.auth.CreateApplication(ctx, tx, auth.NewApplication{Name: req.Name, Description: req.Description,
			Namespace: ns, Role: role, CreatedBy: by.App, CreatedByOwner: by.Role == auth.RoleOwner, WithoutAuth: !o.cfg.RequireAuth})
		return err
	})
	if err != nil {
		return nil, err
	}
	o.log.Info("application created", "application", app.ID, "namespace", app.Namespace.Name, "role", app.Role, "by", by.App)
	o.warnWithoutAuth(app)
	return app, nil
}

// warnWithoutAuth tells the operator, when it happens, why a later start
// with --auth will refuse an application.
func (o *Ops) warnWithoutAuth(app *auth.Application) {
	if app.WithoutAuth {
		o.log.Warn("an application was made, changed or given its secret without authentication: a start with --auth refuses it until it is deleted", "application", app.ID)
	}
}

// UpdateApplicationRequest changes an application's name and description,
// and its role if Role is set (Folio's).
type UpdateApplicationRequest struct {
	Malformed             error // see Malformed
	ID, Name, Description string
	Role                  string
}

// UpdateApplication changes an application of the caller's namespace.
func (o *Ops) UpdateApplication(ctx context.Context, c Caller, req UpdateApplicationRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "UpdateApplication")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	var app *auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		app, err = o.auth.UpdateApplication(ctx, tx, o.principal(c), auth.ApplicationUpdate{ID: req.ID, Name: req.Name,
			Description: req.Description, Role: auth.Role(req.Role)})
		return err
	})
	if err != nil {
		return nil, err
	}
	o.warnWithoutAuth(app)
	return app, nil
}

// ApplicationRequest names an application.
type ApplicationRequest struct {
	Malformed error // see Malformed
	ID        string
}

// RotateApplicationSecret gives an application a new secret, returned this
// once; its tokens stop working.
func (o *Ops) RotateApplicationSecret(ctx context.Context, c Caller, req ApplicationRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "RotateApplicationSecret")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	var app *auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		app, err = o.auth.RotateSecret(ctx, tx, o.principal(c), req.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	o.log.Info("application secret rotated", "application", app.ID, "by", c.App)
	o.warnWithoutAuth(app)
	return app, nil
}

// DeleteApplication deletes an application; its tokens stop working.
func (o *Ops) DeleteApplication(ctx context.Context, c Caller, req ApplicationRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteApplication")
	defer op.end(&err)
	if err != nil {
		return err
	}
	if req.Malformed != nil {
		return req.Malformed
	}
	err = o.run(ctx, func(tx kv.Tx) error { return o.auth.DeleteApplication(ctx, tx, o.principal(c), req.ID) })
	if err != nil {
		return err
	}
	o.log.Info("application deleted", "application", req.ID, "by", c.App)
	return nil
}

// ListApplications lists the applications of the caller's namespace (of
// every namespace for the owner), without their secrets.
func (o *Ops) ListApplications(ctx context.Context, c Caller) (_ []*Application, err error) {
	ctx, op, err := o.open(ctx, c, "ListApplications")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	var out []*auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		out, err = o.auth.ListApplications(ctx, tx, o.principal(c))
		return err
	})
	return out, err
}

// TokenRequest is a request of the token endpoint: an application's id
// and secret, or a refresh token. From is the address it came from, for
// the limit on failed requests.
type TokenRequest struct {
	Malformed    error // see Malformed
	GrantType    string
	ClientID     string
	ClientSecret string
	RefreshToken string
	From         string
}

// GetAccessToken answers the token endpoint. It needs no credentials
// beyond those it checks.
func (o *Ops) GetAccessToken(ctx context.Context, c Caller, req TokenRequest) (_ *Tokens, err error) {
	ctx, op, err := o.open(ctx, c, "GetAccessToken")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	t, err := o.auth.Token(ctx, auth.TokenRequest{GrantType: req.GrantType, ClientID: req.ClientID,
		ClientSecret: req.ClientSecret, RefreshToken: req.RefreshToken, From: req.From})
	return t, err
}

// RotateSigningKey makes a new key sign tokens; tokens of the older keys
// stay valid until they expire. It returns the new key's id.
func (o *Ops) RotateSigningKey(ctx context.Context, c Caller) (_ string, err error) {
	ctx, op, err := o.open(ctx, c, "RotateSigningKey")
	defer op.end(&err)
	if err != nil {
		return "", err
	}
	id, err := o.auth.RotateSigningKey(ctx)
	if err != nil {
		return "", err
	}
	o.log.Info("signing key rotated", "key", id, "by", c.App)
	return id, nil
}
