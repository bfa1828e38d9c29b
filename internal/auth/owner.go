package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/foliodb/folio/internal/atomicfile"
	"github.com/foliodb/folio/internal/kv"
)

// OwnerCredentials is the owner application's id and secret, as the owner
// file holds them.
type OwnerCredentials struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
}

// What EnsureOwner names the owner application it makes.
const (
	ownerName        = "owner"
	ownerDescription = "the server's owner, made at the first start with authentication on"
)

// EnsureOwner makes sure the store has an owner application, so that a
// server with authentication on can be managed at all. If it has none, the
// owner is created with the credentials of the file at path if there is
// one (an operator's choice, made before the first start), or with new
// ones, which are written to path (readable by its owner only) before the
// owner is stored: a crash between the two leaves credentials that the next
// start stores. It returns the owner it created (without its secret: that
// is in the file), or nil if there was one.
func (s *Service) EnsureOwner(ctx context.Context, path string) (*Application, error) {
	var exists bool
	if _, err := kv.Run(ctx, s.store, func(tx kv.Tx) error {
		var err error
		exists, err = HasOwner(ctx, tx)
		return err
	}); err != nil {
		return nil, err
	}
	if exists {
		return nil, nil
	}
	creds, err := readOwnerFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		creds = OwnerCredentials{ClientID: newAppID(), ClientSecret: newSecret()}
		err = writeOwnerFile(path, creds)
	}
	if err != nil {
		return nil, err
	}
	var app *Application
	_, err = kv.Run(ctx, s.store, func(tx kv.Tx) error {
		var err error
		app, err = s.CreateApplication(ctx, tx, NewApplication{ID: creds.ClientID, Secret: creds.ClientSecret,
			Name: ownerName, Description: ownerDescription,
			Namespace: Default, Role: RoleOwner, OwnerFile: true})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create the owner application from %s: %w", path, err)
	}
	app.Secret = ""
	return app, nil
}

func readOwnerFile(path string) (OwnerCredentials, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return OwnerCredentials{}, err
	}
	var c OwnerCredentials
	if err := json.Unmarshal(b, &c); err != nil {
		return OwnerCredentials{}, fmt.Errorf("owner credentials file %s: %w", path, err)
	}
	if c.ClientID == "" || c.ClientSecret == "" {
		return OwnerCredentials{}, fmt.Errorf("owner credentials file %s: client_id and client_secret are required", path)
	}
	return c, nil
}

// writeOwnerFile writes the credentials whole or not at all, readable
// by the server's user alone.
func writeOwnerFile(path string, c OwnerCredentials) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("owner credentials file: %w", err)
	}
	err = atomicfile.Write(path, 0o600, func(f *os.File) error {
		_, err := f.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		return fmt.Errorf("owner credentials file %s: %w", path, err)
	}
	return nil
}
