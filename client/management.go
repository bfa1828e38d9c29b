package client

import (
	"context"
	"encoding/json"
	"time"
)

// The management calls of a server with authentication on: namespaces,
// applications and the signing key (docs/api.md "Authentication"). Each
// needs a role: admin for the applications of one's namespace, owner for
// the rest.

// Namespace is a tenant: its databases are apart from the others'.
type Namespace struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// CreateNamespace creates a namespace with the id given, or the next free
// one with 0, and returns the server's message.
func (c *Client) CreateNamespace(ctx context.Context, name string, id int64) (string, error) {
	var body any
	if id != 0 {
		body = map[string]int64{"id": id}
	}
	var res struct {
		Message string `json:"message"`
	}
	err := c.call(ctx, &request{route: routeCreateNamespace, params: params{name: name}, body: body}, &res)
	return res.Message, err
}

// ListNamespaces lists every namespace (owner only).
func (c *Client) ListNamespaces(ctx context.Context) ([]Namespace, error) {
	var res struct {
		Namespaces []Namespace `json:"namespaces"`
	}
	err := c.call(ctx, &request{route: routeListNamespaces}, &res)
	return res.Namespaces, err
}

// DeleteNamespace deletes a namespace that holds no databases and no
// applications (owner only), and returns the server's message.
func (c *Client) DeleteNamespace(ctx context.Context, name string) (string, error) {
	var res struct {
		Message string `json:"message"`
	}
	err := c.call(ctx, &request{route: routeDeleteNamespace, params: params{namespaceID: name}}, &res)
	return res.Message, err
}

// Application is a program's identity: an id and a secret that it
// exchanges for tokens, a role and a namespace.
type Application struct {
	ID          string
	Name        string
	Description string
	// Secret is set only in the answer of CreateApplication and
	// RotateApplicationSecret: the server keeps only its hash.
	Secret               string
	CreatedAt, UpdatedAt time.Time
	CreatedBy, UpdatedBy string
	Namespace            string
	Role                 string
}

// UnmarshalJSON reads an application as the API sends it (times in Unix
// milliseconds).
func (a *Application) UnmarshalJSON(b []byte) error {
	var w struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Description string `json:"description"`
		Secret      string `json:"secret"`
		CreatedAt   int64  `json:"created_at"`
		CreatedBy   string `json:"created_by"`
		UpdatedAt   int64  `json:"updated_at"`
		UpdatedBy   string `json:"updated_by"`
		Namespace   string `json:"namespace"`
		Role        string `json:"role"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*a = Application{ID: w.ID, Name: w.Name, Description: w.Description, Secret: w.Secret, CreatedBy: w.CreatedBy,
		UpdatedBy: w.UpdatedBy, Namespace: w.Namespace, Role: w.Role}
	if w.CreatedAt != 0 {
		a.CreatedAt = time.UnixMilli(w.CreatedAt).UTC()
	}
	if w.UpdatedAt != 0 {
		a.UpdatedAt = time.UnixMilli(w.UpdatedAt).UTC()
	}
	return nil
}

// NewApplication is what CreateApplication makes: Role defaults to
// editor, Namespace to the caller's (another one needs the owner).
type NewApplication struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Role        string `json:"role,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
}

// CreateApplication creates an application and returns it with its
// secret.
func (c *Client) CreateApplication(ctx context.Context, app NewApplication) (*Application, error) {
	var res struct {
		App *Application `json:"created_application"`
	}
	err := c.call(ctx, &request{route: routeCreateApplication, body: app}, &res)
	return res.App, err
}

// ListApplications lists the applications the caller may manage.
func (c *Client) ListApplications(ctx context.Context) ([]Application, error) {
	var res struct {
		Apps []Application `json:"applications"`
	}
	err := c.call(ctx, &request{route: routeListApplications}, &res)
	return res.Apps, err
}

// RotateApplicationSecret gives an application a new secret, returned
// once, and revokes its tokens.
func (c *Client) RotateApplicationSecret(ctx context.Context, id string) (*Application, error) {
	var res struct {
		App *Application `json:"application"`
	}
	err := c.call(ctx, &request{route: routeRotateApplicationSecret, body: map[string]string{"id": id}}, &res)
	return res.App, err
}

// DeleteApplication deletes an application and revokes its tokens.
func (c *Client) DeleteApplication(ctx context.Context, id string) error {
	return c.call(ctx, &request{route: routeDeleteApplication, body: map[string]string{"id": id}}, &struct{}{})
}

// RotateSigningKey makes a new key sign the server's tokens (owner only)
// and returns its id; tokens signed by the old keys stay valid until they
// expire.
func (c *Client) RotateSigningKey(ctx context.Context) (string, error) {
	var res struct {
		KeyID string `json:"key_id"`
	}
	err := c.call(ctx, &request{route: routeRotateSigningKey}, &res)
	return res.KeyID, err
}

// BackupResult is what a backup wrote.
type BackupResult struct {
	// Dir is the backup's directory, on the server's machine.
	Dir string
	// Position is the change-log position the copy holds: every commit up
	// to it and none after.
	Position  uint64
	Bytes     int64
	Files     int
	CreatedAt time.Time
	Duration  time.Duration
}

// Backup has the server copy its embedded store, consistent at one
// position while it goes on serving, into dir: a new or empty directory
// under the server's --backup-dir, named relative to it or by an absolute
// path inside it (owner only; a server without --backup-dir, or on
// PostgreSQL, answers FAILED_PRECONDITION). `folio restore` restores it
// (docs/operations.md). HTTP only: the gRPC API has no such call.
func (c *Client) Backup(ctx context.Context, dir string) (*BackupResult, error) {
	var res struct {
		Dir        string    `json:"dir"`
		Position   uint64    `json:"position"`
		Bytes      int64     `json:"bytes"`
		Files      int       `json:"files"`
		CreatedAt  time.Time `json:"created_at"`
		DurationMS int64     `json:"duration_ms"`
	}
	if err := c.call(ctx, &request{route: routeBackup, body: map[string]string{"dir": dir}}, &res); err != nil {
		return nil, err
	}
	return &BackupResult{Dir: res.Dir, Position: res.Position, Bytes: res.Bytes, Files: res.Files, CreatedAt: res.CreatedAt,
		Duration: time.Duration(res.DurationMS) * time.Millisecond}, nil
}
