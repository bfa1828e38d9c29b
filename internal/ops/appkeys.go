package ops

import (
	"context"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/catalog"
	"github.com/foliodb/folio/internal/kv"
)

// The final API's app keys: applications (auth's one concept) with a
// scope, a project's (its database) or global (the namespace's). A
// project's key reaches that project only (Caller.reach); a global key is
// what an application has always been. Each call is the applications'
// call, seeing only keys of its scope (auth.Caller.View): a project's key
// calls never touch another project's keys, nor global ones.

// AppKeyRequest is the request of the app key calls: Project names the
// project of a project's key ("" for the global calls), ID the key (not
// for create and list), Name, Description and Role what create and update
// set (Role is Folio's; the final API's keys had no role).
type AppKeyRequest struct {
	Malformed         error // see Malformed
	Project, ID       string
	Name, Description string
	Role              string
}

// keyCaller checks an app key call's project and returns the principal of
// c seeing the keys of the call's scope. A caller confined to a project
// reaches that project's keys only: no global keys, no other project's.
func (o *Ops) keyCaller(c Caller, req AppKeyRequest, global bool) (auth.Caller, error) {
	if !global {
		if req.Project == "" {
			return auth.Caller{}, apierror.Errorf(apierror.InvalidArgument, "Project must be specified")
		}
		if err := catalog.CheckDatabaseName(req.Project); err != nil {
			return auth.Caller{}, err
		}
	}
	if req.Malformed != nil {
		return auth.Caller{}, req.Malformed
	}
	if global && c.OnlyProject != "" {
		return auth.Caller{}, apierror.Errorf(apierror.PermissionDenied, "an app key of project '%s' cannot manage global app keys", c.OnlyProject)
	}
	if err := c.reach(req.Project); err != nil {
		return auth.Caller{}, err
	}
	by := o.principal(c)
	by.View = auth.KeysOf(req.Project)
	return by, nil
}

// CreateAppKey creates a project's app key, returned with its secret
// (shown this once).
func (o *Ops) CreateAppKey(ctx context.Context, c Caller, req AppKeyRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "CreateAppKey")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.createAppKey(ctx, c, req, false)
}

// CreateGlobalAppKey creates a global app key, returned with its secret.
func (o *Ops) CreateGlobalAppKey(ctx context.Context, c Caller, req AppKeyRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "CreateGlobalAppKey")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	req.Project = ""
	return o.createAppKey(ctx, c, req, true)
}

// createAppKey is the work of the creates: an application in the caller's
// namespace, with a role no higher than the caller's (editor unless the
// request names one).
func (o *Ops) createAppKey(ctx context.Context, c Caller, req AppKeyRequest, global bool) (*Application, error) {
	by, err := o.keyCaller(c, req, global)
	if err != nil {
		return nil, err
	}
	role := DefaultApplicationRole
	if req.Role != "" {
		role = auth.Role(req.Role)
	}
	if err := auth.CanGrant(by, role); err != nil {
		return nil, err
	}
	var app *auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		app, err = o.auth.CreateApplication(ctx, tx, auth.NewApplication{Name: req.Name, Description: req.Description,
			Namespace: by.Namespace, Role: role, Project: req.Project, CreatedBy: by.App,
			CreatedByOwner: by.Role == auth.RoleOwner, WithoutAuth: !o.cfg.RequireAuth})
		return err
	})
	if err != nil {
		return nil, err
	}
	o.log.Info("app key created", "application", app.ID, "namespace", app.Namespace.Name, "project", app.Project, "role", app.Role, "by", by.App)
	o.warnWithoutAuth(app)
	return app, nil
}

// UpdateAppKey changes a project's key: its name and description where
// the request has them, its role if it names one.
func (o *Ops) UpdateAppKey(ctx context.Context, c Caller, req AppKeyRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "UpdateAppKey")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.updateAppKey(ctx, c, req, false)
}

// UpdateGlobalAppKey changes a global key, as UpdateAppKey.
func (o *Ops) UpdateGlobalAppKey(ctx context.Context, c Caller, req AppKeyRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "UpdateGlobalAppKey")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	req.Project = ""
	return o.updateAppKey(ctx, c, req, true)
}

func (o *Ops) updateAppKey(ctx context.Context, c Caller, req AppKeyRequest, global bool) (*Application, error) {
	by, err := o.keyCaller(c, req, global)
	if err != nil {
		return nil, err
	}
	var app *auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		app, err = o.auth.UpdateApplication(ctx, tx, by, auth.ApplicationUpdate{ID: req.ID, Name: req.Name,
			Description: req.Description, Role: auth.Role(req.Role), Partial: true})
		return err
	})
	if err != nil {
		return nil, err
	}
	o.warnWithoutAuth(app)
	return app, nil
}

// RotateAppKeySecret gives a project's key a new secret, returned this
// once; its tokens stop working (on every node within auth's
// AppCacheTTL).
func (o *Ops) RotateAppKeySecret(ctx context.Context, c Caller, req AppKeyRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "RotateAppKeySecret")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.rotateAppKey(ctx, c, req, false)
}

// RotateGlobalAppKeySecret is RotateAppKeySecret for a global key.
func (o *Ops) RotateGlobalAppKeySecret(ctx context.Context, c Caller, req AppKeyRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "RotateGlobalAppKeySecret")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	req.Project = ""
	return o.rotateAppKey(ctx, c, req, true)
}

func (o *Ops) rotateAppKey(ctx context.Context, c Caller, req AppKeyRequest, global bool) (*Application, error) {
	by, err := o.keyCaller(c, req, global)
	if err != nil {
		return nil, err
	}
	var app *auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		app, err = o.auth.RotateSecret(ctx, tx, by, req.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	o.log.Info("app key secret rotated", "application", app.ID, "project", app.Project, "by", by.App)
	o.warnWithoutAuth(app)
	return app, nil
}

// DeleteAppKey deletes a project's key; its tokens stop working.
func (o *Ops) DeleteAppKey(ctx context.Context, c Caller, req AppKeyRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteAppKey")
	defer op.end(&err)
	if err != nil {
		return err
	}
	return o.deleteAppKey(ctx, c, req, false)
}

// DeleteGlobalAppKey deletes a global key.
func (o *Ops) DeleteGlobalAppKey(ctx context.Context, c Caller, req AppKeyRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteGlobalAppKey")
	defer op.end(&err)
	if err != nil {
		return err
	}
	req.Project = ""
	return o.deleteAppKey(ctx, c, req, true)
}

func (o *Ops) deleteAppKey(ctx context.Context, c Caller, req AppKeyRequest, global bool) error {
	by, err := o.keyCaller(c, req, global)
	if err != nil {
		return err
	}
	if err := o.run(ctx, func(tx kv.Tx) error { return o.auth.DeleteApplication(ctx, tx, by, req.ID) }); err != nil {
		return err
	}
	o.log.Info("app key deleted", "application", req.ID, "project", req.Project, "by", by.App)
	return nil
}

// ListAppKeys lists a project's keys, without their secrets.
func (o *Ops) ListAppKeys(ctx context.Context, c Caller, req AppKeyRequest) (_ []*Application, err error) {
	ctx, op, err := o.open(ctx, c, "ListAppKeys")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.listAppKeys(ctx, c, req, false)
}

// ListGlobalAppKeys lists the global keys, without their secrets.
func (o *Ops) ListGlobalAppKeys(ctx context.Context, c Caller) (_ []*Application, err error) {
	ctx, op, err := o.open(ctx, c, "ListGlobalAppKeys")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	return o.listAppKeys(ctx, c, AppKeyRequest{}, true)
}

// listAppKeys lists the keys of the caller's namespace in the call's
// scope: the owner's too, though it may see every namespace's
// applications, since a key belongs to a namespace's project or to the
// namespace.
func (o *Ops) listAppKeys(ctx context.Context, c Caller, req AppKeyRequest, global bool) ([]*Application, error) {
	by, err := o.keyCaller(c, req, global)
	if err != nil {
		return nil, err
	}
	var out []*auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		out, err = o.auth.ListApplications(ctx, tx, by)
		return err
	})
	kept := out[:0]
	for _, a := range out {
		if a.Namespace.Name == by.Namespace.Name {
			kept = append(kept, a)
		}
	}
	return kept, err
}
