package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// The management commands against a running node with authentication on,
// through their entry points, as an operator would run them.
func TestManagementCommands(t *testing.T) {
	ownerFile := filepath.Join(t.TempDir(), "owner.json")
	n, err := node.Start(context.Background(), node.DefaultConfigWith(func(nc *node.Config) {
		nc.Store = backendtest.OpenPebble(t)
		nc.Addr = "127.0.0.1:0"
		nc.ShutdownTimeout = 5 * time.Second
		nc.Auth = true
		nc.OwnerFile = ownerFile
		nc.Tokens.HashCost = bcrypt.MinCost
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var owner auth.OwnerCredentials
	raw, _ := os.ReadFile(ownerFile)
	json.Unmarshal(raw, &owner)
	url := "http://" + n.Addr().String()
	as := func(id, secret string) []string {
		return []string{"--url", url, "--client-id", id, "--client-secret", secret}
	}
	run := func(cmd func([]string, *bytes.Buffer) error, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := cmd(args, &out); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	app := func(args []string, out *bytes.Buffer) error { return execute(append([]string{"app"}, args...), out) }
	ns := func(args []string, out *bytes.Buffer) error {
		return execute(append([]string{"namespace"}, args...), out)
	}
	key := func(args []string, out *bytes.Buffer) error { return execute(append([]string{"key"}, args...), out) }

	out := run(ns, append([]string{"create"}, append(as(owner.ClientID, owner.ClientSecret), "--id", "7", "acme")...)...)
	if !strings.Contains(out, "Namespace created, with id=7, and name=acme") {
		t.Fatalf("namespace create printed %q", out)
	}
	out = run(ns, append([]string{"list"}, as(owner.ClientID, owner.ClientSecret)...)...)
	if !strings.Contains(out, "1   default_namespace") || !strings.Contains(out, "7   acme") {
		t.Fatalf("namespace list printed %q", out)
	}
	run(ns, append([]string{"create"}, append(as(owner.ClientID, owner.ClientSecret), "scratch")...)...)
	out = run(ns, append([]string{"delete"}, append(as(owner.ClientID, owner.ClientSecret), "scratch")...)...)
	if !strings.Contains(out, "Namespace: scratch deleted successfully") {
		t.Fatalf("namespace delete printed %q", out)
	}
	// An admin of acme, as JSON: the record with its secret.
	out = run(app, append([]string{"create"}, append(as(owner.ClientID, owner.ClientSecret), "--json", "--name", "ops", "--role", "admin", "--namespace", "acme")...)...)
	var admin map[string]any
	if err := json.Unmarshal([]byte(out), &admin); err != nil || admin["secret"] == nil || admin["role"] != "admin" || admin["namespace"] != "acme" {
		t.Fatalf("app create --json printed %q (%v)", out, err)
	}
	adminID, adminSecret := admin["id"].(string), admin["secret"].(string)
	// The admin makes a reader in its namespace: a table, secret and all.
	out = run(app, append([]string{"create"}, append(as(adminID, adminSecret), "--name", "dashboard", "--role", "reader")...)...)
	if !strings.Contains(out, "role         reader") || !strings.Contains(out, "namespace    acme") || !strings.Contains(out, "secret") || !strings.Contains(out, "shown this once") {
		t.Fatalf("app create printed %q", out)
	}
	readerID := field(t, out, "id")
	out = run(app, append([]string{"list"}, as(adminID, adminSecret)...)...)
	if !strings.Contains(out, readerID) || !strings.Contains(out, adminID) || strings.Contains(out, adminSecret) || strings.Contains(out, "SECRET") {
		t.Fatalf("app list printed %q", out)
	}
	out = run(app, append([]string{"rotate"}, append(as(adminID, adminSecret), readerID)...)...)
	if !strings.Contains(out, "shown this once") {
		t.Fatalf("app rotate printed %q", out)
	}
	out = run(app, append([]string{"delete"}, append(as(adminID, adminSecret), readerID)...)...)
	if !strings.Contains(out, "true") {
		t.Fatalf("app delete printed %q", out)
	}
	out = run(key, append([]string{"rotate"}, as(owner.ClientID, owner.ClientSecret)...)...)
	if !strings.Contains(out, "KEY_ID") {
		t.Fatalf("key rotate printed %q", out)
	}

	// Refusals come back as the API's code and message.
	var buf bytes.Buffer
	err = ns(append([]string{"list"}, as(adminID, adminSecret)...), &buf)
	if err == nil || !strings.Contains(err.Error(), "PERMISSION_DENIED") {
		t.Fatalf("an admin lists namespaces: %v", err)
	}
	err = app(append([]string{"list"}, as(adminID, "wrong")...), &buf)
	if err == nil || !strings.Contains(err.Error(), "UNAUTHENTICATED: invalid client credentials") {
		t.Fatalf("a wrong secret: %v", err)
	}
	err = app([]string{"list", "--url", url}, &buf)
	if err == nil || !strings.Contains(err.Error(), "request unauthenticated with bearer") {
		t.Fatalf("no credentials: %v", err)
	}
}

// field is the value of a row of a printed record.
func field(t *testing.T, out, name string) string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			return f[1]
		}
	}
	t.Fatalf("no %s in %q", name, out)
	return ""
}
