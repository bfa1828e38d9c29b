// Package soak holds the soak test (`make soak`, not part of `make test`,
// built only with the soak tag): a real `folio serve` under a thousand
// connections of every bad kind, a kill -9 in the middle and a restart. It
// checks what hardening promises: every client is answered or cut off with
// a clear error, no acknowledged write is lost, and the server's memory
// ends below a stated bound.
package soak
