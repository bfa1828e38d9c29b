// Package clienttest runs the official Go client of the Tigris v1 API,
// github.com/tigrisdata/tigris-client-go at v1.0.0-alpha.32 (the version
// the original server of this API's era pinned), and the TypeScript client
// @tigrisdata/core 1.0.0-beta.21, against a real `folio serve` process
// (tests/servetest) listening on a loopback port: first with the
// client's default protocol, gRPC, then over its HTTP protocol, on every
// storage backend. The server runs as a process of its own because the Go
// client's generated protobuf package and the server's
// (internal/wire/tigrisv1) register the same names: one binary cannot
// link both.
//
// The tests are the client's point of view: a database and a collection
// made from a Go struct, generated keys, reads by key and by filter,
// updates, deletes, transactions committed and rolled back, and change
// events. Where the two protocols of the client differ (generated keys do
// not reach the application over HTTP: the client's HTTP decoder drops the
// insert response's keys), the tests assert what really happens.
package clienttest
