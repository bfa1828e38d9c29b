package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// CollectionInfo is one collection of a list.
type CollectionInfo struct {
	Name     string          `json:"collection"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// CollectionDescription is a collection with its schema.
type CollectionDescription struct {
	Name     string          `json:"collection"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
	// Schema is the JSON schema as it was given.
	Schema json.RawMessage `json:"schema"`
	Size   int64           `json:"size"`
	Sizes  Sizes           `json:"sizes"`
}

func (s scope) createCollection(ctx context.Context, name string, schema []byte) error {
	schema, err := titled(schema, name)
	if err != nil {
		return err
	}
	body := map[string]json.RawMessage{"schema": schema}
	return s.call(ctx, routeCreateCollection, name, body, &struct{}{})
}

// titled sets a schema's title to name if it has none, first in the
// object so that the schema keeps the order its author gave it.
func titled(schema []byte, name string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, fmt.Errorf("the schema of %s is not a JSON object: %w", name, err)
	}
	if _, ok := obj["title"]; ok {
		return schema, nil
	}
	body := bytes.TrimSpace(schema)[1:] // after the object's '{'
	title, _ := json.Marshal(name)
	out := append([]byte(`{"title":`), title...)
	if len(obj) > 0 {
		out = append(out, ',')
	}
	return append(out, body...), nil
}

func (s scope) dropCollection(ctx context.Context, name string) error {
	return s.call(ctx, routeDropCollection, name, nil, &struct{}{})
}

func (s scope) listCollections(ctx context.Context) ([]CollectionInfo, error) {
	var res struct {
		Collections []CollectionInfo `json:"collections"`
	}
	err := s.call(ctx, routeListCollections, "", nil, &res)
	return res.Collections, err
}

func (s scope) describeCollection(ctx context.Context, name string) (*CollectionDescription, error) {
	var d CollectionDescription
	if err := s.call(ctx, routeDescribeCollection, name, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// CreateCollection creates the collection name with a JSON schema
// (docs/api.md "Schemas"), or changes the schema of an existing one (only
// additions are allowed). A schema without a "title" gets the collection's
// name, as the API requires one equal to it. SchemaOf makes a schema from
// a Go struct.
func (db *Database) CreateCollection(ctx context.Context, name string, schema []byte) error {
	return db.scope().createCollection(ctx, name, schema)
}

// DropCollection drops a collection and its documents.
func (db *Database) DropCollection(ctx context.Context, name string) error {
	return db.scope().dropCollection(ctx, name)
}

// ListCollections lists the database's collections.
func (db *Database) ListCollections(ctx context.Context) ([]CollectionInfo, error) {
	return db.scope().listCollections(ctx)
}

// DescribeCollection describes a collection, with its schema.
func (db *Database) DescribeCollection(ctx context.Context, name string) (*CollectionDescription, error) {
	return db.scope().describeCollection(ctx, name)
}
