// Package apitest is Folio's black-box test suite of the Tigris v1 HTTP API.
//
// The tests start a real node (internal/node: the store, its parts and the
// HTTP transport) on a free loopback port and talk to it over HTTP only,
// checking what a client sees: paths, status codes, exact bodies and
// messages (reference §1 and §3 to §6, §9 and §11). One test also builds and
// runs the folio binary itself.
//
// Every in-process test runs once per storage backend (tests/backendtest);
// a new backend joins the suite, and every other suite, with a row there.
package apitest
