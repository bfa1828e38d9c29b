package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/foliodb/folio/internal/schemainfer"
)

// inferSchema makes a collection's schema from a sample of its documents
// (internal/schemainfer, which the server's import call shares), and words
// its refusals for the command line. The key is keyField if given; else
// "id" when every document has one of its own, unique in the sample; else
// a generated uuid "id".
func inferSchema(coll string, sample []json.RawMessage, keyField string) (json.RawMessage, error) {
	var opts schemainfer.Options
	if keyField != "" {
		opts.PrimaryKey = []string{keyField}
	}
	schema, err := schemainfer.Infer(coll, sample, opts)
	var keyErr *schemainfer.KeyError
	var typeErr *schemainfer.TypeError
	switch {
	case errors.As(err, &keyErr) && keyErr.Given:
		return nil, usagef("--primary-key %s: %s", keyErr.Field, keyErr.Why)
	case errors.As(err, &keyErr):
		return nil, usagef("%s; pick the key with --primary-key", keyErr)
	case errors.As(err, &typeErr):
		return nil, usagef("%s; create the collection with a schema (folio collection create)", typeErr)
	}
	return schema, err
}

// printSchema shows an inferred schema: indented for a person, else as a
// JSON line {"schema":…}.
func printSchema(w io.Writer, schema json.RawMessage, indented bool, sampled int) error {
	if !indented {
		_, err := fmt.Fprintf(w, "{\"schema\":%s,\"sampled\":%d}\n", schema, sampled)
		return err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, schema, "", "  "); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "schema inferred from %d records:\n%s\n", sampled, b.Bytes())
	return err
}
