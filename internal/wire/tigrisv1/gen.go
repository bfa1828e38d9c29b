// Package tigrisv1 is the generated Go code of the Tigris v1 API's
// messages and services, from Folio's own definitions in
// api/proto/tigrisdata/v1: both published generations (2022's databases,
// 2023's projects and branches) on the published wire names
// (/tigrisdata.v1.Tigris/Read), plus Folio's own fields from 1001 up.
//
// Only the transports, client/ and tests import it (internal/archtest).
// Edit the .proto files, then run go generate ./internal/wire/... (needs
// protoc 3.21.12: apt-get install protobuf-compiler libprotobuf-dev); a
// test fails while the committed code is stale.
package tigrisv1

//go:generate ./generate.sh ../../..
