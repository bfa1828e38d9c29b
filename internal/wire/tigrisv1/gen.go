// Package tigrisv1 is the generated Go code of the Tigris v1 API's
// messages and services, from Folio's own definitions in
// api/proto/tigrisdata/v1: both published generations (2022's databases,
// 2023's projects and branches) on the published wire names
// (/tigrisdata.v1.Tigris/Read), plus Folio's own fields from 1001 up.
//
// Only the transports, the generator of client/'s shapes
// (client/internal/shapegen) and tests import it (tests/archtest).
// Edit the .proto files, then run go generate ./internal/wire/... (needs
// protoc 3.21.12: apt-get install protobuf-compiler libprotobuf-dev); a
// test fails while the committed code is stale. That also rewrites the Go
// client's shapes of the messages (client/shapes_gen.go), which its
// generator reads from this package's descriptors.
package tigrisv1

// The client's shapes come after this package's code, which they are read
// from (go generate ./... reaches client/ before this package).
//go:generate ./generate.sh ../../..
//go:generate go generate ../../../client
