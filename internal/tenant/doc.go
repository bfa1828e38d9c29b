// Package tenant keeps what a namespace holds besides its databases and
// applications: small JSON values its applications keep (metadata, the
// namespace's own and each application's), and the quotas its owner set
// (storage bytes, requests a second), with the per-node limiter that
// enforces the rate. Everything is keyed under keyspace.Tenant, which
// deleting the namespace clears.
package tenant
