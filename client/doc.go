// Package client is the Go client of Folio: databases, collections,
// typed documents, search, transactions, change events and messages,
// over Folio's HTTP/JSON API (the Tigris v1 API, docs/api.md).
//
// It speaks HTTP (and HTTPS) today; gRPC is planned and will be chosen by
// the URL's scheme, with the same types. It imports only the standard
// library.
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
// NOT_FOUND, …): test them with errors.As or IsCode. Streams (reads,
// searches, events, subscriptions) are iterators to range over; events and
// subscriptions reconnect after a lost connection or a server restart and
// resume right after the last item they yielded.
package client
