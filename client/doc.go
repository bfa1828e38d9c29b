// Package client is the Go client of Folio: databases, collections,
// typed documents, search, transactions, change events and messages,
// over Folio's API (the Tigris v1 API, docs/api.md).
//
// The URL's scheme chooses the protocol: HTTP with JSON ("http://",
// "https://") or gRPC ("grpc://" in cleartext, "grpcs://" over TLS), with
// the same types, calls and errors; only RotateSigningKey and Backup are
// HTTP only.
// It imports only the standard library (gRPC included: it speaks gRPC
// over net/http's HTTP/2, encoding protobuf by the messages' shapes,
// which are generated from Folio's definitions of the wire in api/proto:
// shapes_gen.go, written by internal/shapegen through go generate).
//
// A program opens a Client on a server's URL, names a Database, and works
// on typed collections:
//
//	c, err := client.Open("http://localhost:8081", client.Options{})
//	db := c.Database("shop")
//	users := client.Coll[User](db, "users")
//	keys, err := users.Insert(ctx, &User{Name: "Ann"})
//	for u, err := range users.Read(ctx, client.Eq("name", "Ann")) { … }
//
// Errors the API answers are *Error values carrying its code (ABORTED,
// NOT_FOUND, …), the same over either protocol: test them with errors.As
// or IsCode. Streams (reads,
// searches, events, subscriptions) are iterators to range over; events and
// subscriptions reconnect after a lost connection or a server restart and
// resume right after the last item they yielded.
package client
