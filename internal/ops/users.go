package ops

import (
	"context"

	"github.com/foliodb/folio/internal/apierror"
	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/kv"
)

// Who the caller is, a namespace's users and its invitations (the final
// API's, for a server with authentication). An invitation is a one-time
// code for an email and a role, which an admin hands to the invitee
// itself: Folio sends no mail. Verified, it becomes an application of
// the namespace (auth.VerifyInvitation).

// Invitation is an invitation as the transports see it.
type Invitation = auth.Invitation

// WhoAmI is who the caller is: its application (the token's subject),
// namespace and role, and the project its token is confined to if any.
type WhoAmI struct {
	Sub       string
	Namespace Namespace
	Role      string
	Project   string
}

// WhoAmI answers who the caller is. Without authentication every caller
// is the anonymous one, with the owner's role in the default namespace.
func (o *Ops) WhoAmI(ctx context.Context, c Caller) (_ *WhoAmI, err error) {
	_, op, err := o.open(ctx, c, "WhoAmI")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	by := o.principal(c)
	return &WhoAmI{Sub: by.App, Namespace: by.Namespace, Role: string(by.Role), Project: by.Project}, nil
}

// errInvitationsWithoutAuth refuses invitations on a server without
// authentication, where every caller is already the owner and an
// invitation's application could not be told from anyone's.
var errInvitationsWithoutAuth = apierror.Errorf(apierror.FailedPrecondition, "invitations need a server with authentication (folio serve --auth)")

// NewInvitation is one invitation of a CreateInvitationsRequest.
type NewInvitation struct {
	Email, Role, SentByName string
}

// CreateInvitationsRequest invites emails to the caller's namespace.
type CreateInvitationsRequest struct {
	Malformed   error // see Malformed
	Invitations []NewInvitation
}

// CreateInvitations invites each email with its role (at most the
// caller's) and returns the invitations with their one-time codes, for
// the caller to hand over.
func (o *Ops) CreateInvitations(ctx context.Context, c Caller, req CreateInvitationsRequest) (_ []Invitation, err error) {
	ctx, op, err := o.open(ctx, c, "CreateInvitations")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	if !o.cfg.RequireAuth {
		return nil, errInvitationsWithoutAuth
	}
	list := make([]auth.NewInvitation, len(req.Invitations))
	for i, in := range req.Invitations {
		role, err := auth.ParseRole(in.Role)
		if err != nil {
			return nil, err
		}
		list[i] = auth.NewInvitation{Email: in.Email, Role: role, SentByName: in.SentByName}
	}
	by := o.principal(c)
	var out []auth.Invitation
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		out, err = o.auth.CreateInvitations(ctx, tx, by, list)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, inv := range out {
		o.log.Info("invitation created", "email", inv.Email, "namespace", inv.Namespace.Name, "role", inv.Role, "by", by.App)
	}
	return out, nil
}

// InvitationsRequest names invitations: by email (delete) and status
// (PENDING, ACCEPTED or EXPIRED, any case; "" for any).
type InvitationsRequest struct {
	Malformed error // see Malformed
	Email     string
	Status    string
}

// DeleteInvitations deletes the invitation of an email to the caller's
// namespace, if it has the status asked for; its code no longer verifies.
func (o *Ops) DeleteInvitations(ctx context.Context, c Caller, req InvitationsRequest) (err error) {
	ctx, op, err := o.open(ctx, c, "DeleteInvitations")
	defer op.end(&err)
	if err != nil {
		return err
	}
	if req.Malformed != nil {
		return req.Malformed
	}
	status, err := auth.ParseInvitationStatus(req.Status)
	if err != nil {
		return err
	}
	return o.run(ctx, func(tx kv.Tx) error {
		return o.auth.DeleteInvitations(ctx, tx, o.principal(c), req.Email, status)
	})
}

// ListInvitations lists the invitations of the caller's namespace with
// the status asked for, without their codes.
func (o *Ops) ListInvitations(ctx context.Context, c Caller, req InvitationsRequest) (_ []Invitation, err error) {
	ctx, op, err := o.open(ctx, c, "ListInvitations")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	status, err := auth.ParseInvitationStatus(req.Status)
	if err != nil {
		return nil, err
	}
	var out []auth.Invitation
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		out, err = o.auth.ListInvitations(ctx, tx, o.principal(c), status)
		return err
	})
	return out, err
}

// VerifyInvitationRequest is an invitee's email and code.
type VerifyInvitationRequest struct {
	Malformed   error // see Malformed
	Email, Code string
}

// VerifyInvitation accepts an invitation, once: it needs no credentials
// (the code is one), and returns the application it became, with its
// secret.
func (o *Ops) VerifyInvitation(ctx context.Context, c Caller, req VerifyInvitationRequest) (_ *Application, err error) {
	ctx, op, err := o.open(ctx, c, "VerifyInvitation")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	if req.Malformed != nil {
		return nil, req.Malformed
	}
	if !o.cfg.RequireAuth {
		return nil, errInvitationsWithoutAuth
	}
	var app *auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		app, err = o.auth.VerifyInvitation(ctx, tx, req.Email, req.Code)
		return err
	})
	if err != nil {
		return nil, err
	}
	o.log.Info("invitation accepted", "email", req.Email, "application", app.ID, "namespace", app.Namespace.Name, "role", app.Role)
	return app, nil
}

// ListUsers lists the caller's namespace's users: its applications, those
// invitations made with their email.
func (o *Ops) ListUsers(ctx context.Context, c Caller) (_ []*Application, err error) {
	ctx, op, err := o.open(ctx, c, "ListUsers")
	defer op.end(&err)
	if err != nil {
		return nil, err
	}
	var out []*auth.Application
	err = o.run(ctx, func(tx kv.Tx) (err error) {
		out, err = o.auth.ListUsers(ctx, tx, o.principal(c))
		return err
	})
	return out, err
}
