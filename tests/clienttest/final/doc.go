// Package finalclient is an application written against the final official
// Go client of the Tigris API, github.com/tigrisdata/tigris-client-go
// v1.0.0 (June 2023), as its tests: flow_test.go runs an application's whole
// flow against the server that FOLIO_URL names, and search_test.go an
// application of the client's search package (indexes of their own,
// documents, words, facets, vector queries), each failing on any answer
// the application would not expect.
//
// It is a module of its own because v1.0.0 has the module path of the
// v1.0.0-alpha.32 that the main module requires: one module cannot build
// both. The main module's tests/clienttest (TestFinalClients) builds and
// starts `folio serve` and runs these tests against it; by hand:
//
//	FOLIO_URL=grpc://127.0.0.1:8081 go test ./...
//	FOLIO_URL=http://127.0.0.1:8081 go test -tags tigris_http,tigris_grpc ./...
//
// Without FOLIO_URL the tests skip.
package finalclient
