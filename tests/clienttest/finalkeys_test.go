package clienttest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/auth"
	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/tlstest"
)

// TestFinalClientsAppKeys runs the final Go client's app key flow
// (final/appkeys_test.go's TestAppKeyFlow), unchanged client, over gRPC
// and over HTTP, against `folio serve --auth` with TLS (the client insists
// on TLS once it has credentials) on each engine: the owner makes project
// keys with the client's own calls, the application gets tokens from its
// key and makes data calls, and another project's key is refused with
// PERMISSION_DENIED.
func TestFinalClientsAppKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("builds folio and two client test binaries: not in -short")
	}
	goFlows := buildGoFlows(t)
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		certFile, keyFile, _ := tlstest.SelfSigned(t)
		ownerFile := filepath.Join(t.TempDir(), "owner.json")
		s := servetest.Start(t, servetest.Options{Backend: b,
			Args: []string{"--auth", "--owner-file", ownerFile, "--tls-cert", certFile, "--tls-key", keyFile, "--log-requests"}})
		var owner auth.OwnerCredentials
		raw, err := os.ReadFile(ownerFile)
		if err != nil || json.Unmarshal(raw, &owner) != nil {
			t.Fatalf("the owner file: %v %s", err, raw)
		}
		creds := []string{"FOLIO_OWNER_ID=" + owner.ClientID, "FOLIO_OWNER_SECRET=" + owner.ClientSecret, "FOLIO_CA_FILE=" + certFile}
		t.Run("go over gRPC", func(t *testing.T) {
			runAuthGoFlow(t, s, goFlows.grpc, "grpc://"+s.Addr, "keys_go_grpc", creds)
		})
		t.Run("go over HTTP", func(t *testing.T) {
			runAuthGoFlow(t, s, goFlows.http, "http://"+s.Addr, "keys_go_http", creds)
		})
	})
}

// runAuthGoFlow runs TestAppKeyFlow of the compiled flow against url with
// the owner's credentials.
func runAuthGoFlow(t *testing.T, s *servetest.Server, bin, url, project string, creds []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const test = "TestAppKeyFlow"
	cmd := exec.CommandContext(ctx, bin, "-test.v", "-test.count=1", "-test.run", "^"+test+"$")
	cmd.Dir = t.TempDir()
	cmd.Env = clientEnv(append([]string{"FOLIO_URL=" + url, "FOLIO_PROJECT=" + project}, creds...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the final Go client's %s against %s failed: %v\n%s", test, url, err, out)
		t.Logf("folio's log:\n%s", s.Output())
		return
	}
	if !strings.Contains(string(out), "--- PASS: "+test+" ") {
		t.Errorf("the final Go client's %s did not run:\n%s", test, out)
	}
}
