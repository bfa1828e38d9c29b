package httpapi

import (
	"fmt"
	"net/http"

	"github.com/foliodb/folio/internal/ops"
)

// The final API's app keys, who am I, a namespace's users and its
// invitations, at the paths of the final client's gateway.

// keyRoutes adds the routes of app keys (a project's and global ones),
// whoami, users and invitations.
func (s *Server) keyRoutes(handle func(pattern string, h func(http.ResponseWriter, *http.Request) error)) {
	const keys = projectsPrefix + "/{db}/apps/keys"
	handle("POST "+keys+"/create", s.createAppKey)
	handle("POST "+keys+"/update", s.updateAppKey)
	handle("DELETE "+keys+"/delete", s.deleteAppKey)
	handle("POST "+keys+"/rotate", s.rotateAppKey)
	handle("GET "+keys, s.listAppKeys)

	const global = "/v1/apps/keys"
	handle("POST "+global+"/create", s.createAppKey)
	handle("PUT "+global+"/update", s.updateAppKey)
	handle("DELETE "+global+"/delete", s.deleteAppKey)
	handle("POST "+global+"/rotate", s.rotateAppKey)
	handle("GET "+global, s.listAppKeys)

	handle("GET /v1/observability/whoami", s.whoAmI)

	const invitations = "/v1/auth/namespace/invitations"
	handle("POST "+invitations+"/create", s.createInvitations)
	handle("DELETE "+invitations+"/delete", s.deleteInvitations)
	handle("GET "+invitations+"/list", s.listInvitations)
	handle("POST "+invitations+"/verify", s.verifyInvitation)
	handle("GET /v1/auth/namespace/users", s.listUsers)
}

// appKeyOut is an app key as the final API sends it: an application
// (applicationJSON) with its project, if any, in place of its namespace.
func appKeyOut(a *ops.Application) applicationJSON {
	out := applicationOut(a)
	out.Namespace, out.Project = "", a.Project
	return out
}

// appKeyRequest decodes an app key call's body; the project is the
// path's, on a project's route (the body's, if any, is the same field of
// the gateway's request, which the path overrides).
func appKeyRequest(r *http.Request) ops.AppKeyRequest {
	var body struct {
		ID, Name, Description, Role, Project string
	}
	req := ops.AppKeyRequest{Malformed: decode(r, &body, nil)}
	req.Project, req.ID, req.Name, req.Description, req.Role = r.PathValue("db"), body.ID, body.Name, body.Description, body.Role
	return req
}

// isGlobalKeyRoute tells /v1/apps/keys from a project's keys.
func isGlobalKeyRoute(r *http.Request) bool { return !isProjectRoute(r) }

func (s *Server) createAppKey(w http.ResponseWriter, r *http.Request) error {
	create := s.ops.CreateAppKey
	if isGlobalKeyRoute(r) {
		create = s.ops.CreateGlobalAppKey
	}
	key, err := create(r.Context(), caller(r), appKeyRequest(r))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // it holds the secret
	writeJSON(w, http.StatusOK, map[string]any{"created_app_key": appKeyOut(key)})
	return nil
}

func (s *Server) updateAppKey(w http.ResponseWriter, r *http.Request) error {
	update := s.ops.UpdateAppKey
	if isGlobalKeyRoute(r) {
		update = s.ops.UpdateGlobalAppKey
	}
	key, err := update(r.Context(), caller(r), appKeyRequest(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"updated_app_key": appKeyOut(key)})
	return nil
}

func (s *Server) rotateAppKey(w http.ResponseWriter, r *http.Request) error {
	rotate := s.ops.RotateAppKeySecret
	if isGlobalKeyRoute(r) {
		rotate = s.ops.RotateGlobalAppKeySecret
	}
	key, err := rotate(r.Context(), caller(r), appKeyRequest(r))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"app_key": appKeyOut(key)})
	return nil
}

func (s *Server) deleteAppKey(w http.ResponseWriter, r *http.Request) error {
	del := s.ops.DeleteAppKey
	if isGlobalKeyRoute(r) {
		del = s.ops.DeleteGlobalAppKey
	}
	if err := del(r.Context(), caller(r), appKeyRequest(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"deleted": true})
	return nil
}

// listAppKeys answers {} for no keys, as the original's gateway did (it
// left out an empty list).
func (s *Server) listAppKeys(w http.ResponseWriter, r *http.Request) error {
	var keys []*ops.Application
	var err error
	if isGlobalKeyRoute(r) {
		if err := decode(r, &struct{}{}, nil); err != nil {
			return err
		}
		keys, err = s.ops.ListGlobalAppKeys(r.Context(), caller(r))
	} else {
		keys, err = s.ops.ListAppKeys(r.Context(), caller(r), appKeyRequest(r))
	}
	if err != nil {
		return err
	}
	out := map[string]any{}
	if len(keys) > 0 {
		list := make([]applicationJSON, len(keys))
		for i, k := range keys {
			list[i] = appKeyOut(k)
		}
		out["app_keys"] = list
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// whoAmI is GET /v1/observability/whoami: the original's fields (a
// machine's token: Folio has no other kind), with Folio's project for an
// app key of a project.
func (s *Server) whoAmI(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	me, err := s.ops.WhoAmI(r.Context(), caller(r))
	if err != nil {
		return err
	}
	out := map[string]any{"sub": me.Sub, "namespace": me.Namespace.Name, "role": me.Role,
		"auth_method": "JWT", "user_type": "machine"}
	if me.Project != "" {
		out["project"] = me.Project
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) createInvitations(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Invitations []struct {
			Email      string `json:"email"`
			Role       string `json:"role"`
			SentByName string `json:"invitation_sent_by_name"`
		} `json:"invitations"`
	}
	req := ops.CreateInvitationsRequest{Malformed: decode(r, &body, nil)}
	for _, in := range body.Invitations {
		req.Invitations = append(req.Invitations, ops.NewInvitation{Email: in.Email, Role: in.Role, SentByName: in.SentByName})
	}
	made, err := s.ops.CreateInvitations(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	created := make([]map[string]any, len(made))
	for i, inv := range made {
		created[i] = map[string]any{"email": inv.Email, "role": string(inv.Role), "code": inv.Code,
			"expiration_time": inv.ExpiresAt.UnixMilli()}
	}
	w.Header().Set("Cache-Control", "no-store") // it holds the codes
	writeJSON(w, http.StatusOK, map[string]any{"status": "created",
		"message": fmt.Sprintf("%d invitation(s) created: hand each code to its invitee (Folio sends no mail)", len(made)),
		"count":   len(made), "created": created})
	return nil
}

func (s *Server) deleteInvitations(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Email  string `json:"email"`
		Status string `json:"status"`
	}
	req := ops.InvitationsRequest{Malformed: decode(r, &body, nil), Email: body.Email, Status: body.Status}
	if err := s.ops.DeleteInvitations(r.Context(), caller(r), req); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "deleted", "message": "Invitation(s) deleted"})
	return nil
}

// invitationJSON is an invitation as the final API lists it.
type invitationJSON struct {
	Email               string `json:"email"`
	Role                string `json:"role"`
	Status              string `json:"status"`
	TigrisNamespace     string `json:"tigris_namespace"`
	TigrisNamespaceName string `json:"tigris_namespace_name"`
	CreatedBy           string `json:"created_by,omitempty"`
	CreatedByName       string `json:"created_by_name,omitempty"`
	ExpirationTime      int64  `json:"expiration_time"`
}

// listInvitations is GET .../invitations/list, with ?status= as the
// gateway sends the request's one field.
func (s *Server) listInvitations(w http.ResponseWriter, r *http.Request) error {
	req := ops.InvitationsRequest{Malformed: decode(r, &struct{}{}, nil), Status: r.URL.Query().Get("status")}
	list, err := s.ops.ListInvitations(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	out := make([]invitationJSON, len(list))
	for i, inv := range list {
		out[i] = invitationJSON{Email: inv.Email, Role: string(inv.Role), Status: inv.Status, TigrisNamespace: inv.Namespace.Name,
			TigrisNamespaceName: inv.Namespace.Name, CreatedBy: inv.CreatedBy, CreatedByName: inv.CreatedByName,
			ExpirationTime: inv.ExpiresAt.UnixMilli()}
	}
	writeJSON(w, http.StatusOK, map[string]any{"invitations": out})
	return nil
}

// verifyInvitation is POST .../invitations/verify: the invitee's email
// and code, no credentials; the answer names the namespace and role, and
// (Folio's) the application's id and secret.
func (s *Server) verifyInvitation(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Email string `json:"email"`
		Code  string `json:"code"`
	}
	req := ops.VerifyInvitationRequest{Malformed: decode(r, &body, nil), Email: body.Email, Code: body.Code}
	app, err := s.ops.VerifyInvitation(r.Context(), caller(r), req)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"tigris_namespace": app.Namespace.Name, "tigris_namespace_name": app.Namespace.Name,
		"role": string(app.Role), "client_id": app.ID, "client_secret": app.Secret})
	return nil
}

// listUsers is GET /v1/auth/namespace/users: the namespace's
// applications in the final API's User (no id: the applications list has
// them).
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	if err := decode(r, &struct{}{}, nil); err != nil {
		return err
	}
	apps, err := s.ops.ListUsers(r.Context(), caller(r))
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(apps))
	for i, a := range apps {
		out[i] = map[string]any{"email": a.Email, "name": a.Name, "created_at": a.CreatedAt.UnixMilli(), "role": string(a.Role)}
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": out})
	return nil
}
