package client

import (
	"context"
	"encoding/json"
)

// Database names a database of the server; making one does not call the
// server.
type Database struct {
	c    *Client
	name string
}

// Database returns a handle on the database name.
func (c *Client) Database(name string) *Database { return &Database{c: c, name: name} }

// Name is the database's name.
func (db *Database) Name() string { return db.name }

// CreateDatabase creates a database; one that exists already is an
// ALREADY_EXISTS error.
func (c *Client) CreateDatabase(ctx context.Context, name string) (*Database, error) {
	if err := c.call(ctx, &request{route: routeCreateDatabase, params: params{db: name}}, &struct{}{}); err != nil {
		return nil, err
	}
	return c.Database(name), nil
}

// Drop drops the database and every collection in it.
func (db *Database) Drop(ctx context.Context) error {
	return db.c.call(ctx, &request{route: routeDropDatabase, params: db.params()}, &struct{}{})
}

// DatabaseInfo is one database of a list.
type DatabaseInfo struct {
	Name     string          `json:"db"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// ListDatabases lists the databases the caller may see.
func (c *Client) ListDatabases(ctx context.Context) ([]DatabaseInfo, error) {
	var res struct {
		Databases []DatabaseInfo `json:"databases"`
	}
	err := c.call(ctx, &request{route: routeListDatabases}, &res)
	return res.Databases, err
}

// Sizes are what a database or collection takes in the store, in bytes
// as stored (before compression). Log is the server's whole change log,
// in a database's description only.
type Sizes struct {
	Documents int64 `json:"documents"`
	Indexes   int64 `json:"indexes"`
	Log       int64 `json:"log,omitempty"`
}

// DatabaseDescription is a database with its collections.
type DatabaseDescription struct {
	Name        string                  `json:"db"`
	Metadata    json.RawMessage         `json:"metadata,omitempty"`
	Collections []CollectionDescription `json:"collections"`
	Size        int64                   `json:"size"`
	Sizes       Sizes                   `json:"sizes"`
}

// Describe describes the database and its collections' schemas.
func (db *Database) Describe(ctx context.Context) (*DatabaseDescription, error) {
	var d DatabaseDescription
	if err := db.c.call(ctx, &request{route: routeDescribeDatabase, params: db.params()}, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

func (db *Database) params() params { return params{db: db.name} }
