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
	"github.com/foliodb/folio/tests/npmtest"
	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/testenv"
	"github.com/foliodb/folio/tests/tlstest"
)

// TestFinalClientsAppKeys runs the final clients, unchanged, against
// `folio serve --auth` with TLS (the clients insist on TLS once they have
// credentials) on each engine: the Go client's app key flow
// (final/appkeys_test.go's TestAppKeyFlow) over gRPC and over HTTP, and
// @tigrisdata/core 1.3.0's (tsfinal/appkeys.js) under node. The owner
// makes project keys (with the Go client's own calls; over HTTP for the
// TypeScript client, which has none), the application gets tokens from
// its key and makes data and cache calls, and another project's key is
// refused with PERMISSION_DENIED.
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
		t.Run("typescript", func(t *testing.T) {
			nodeBin, err := exec.LookPath("node")
			if err != nil {
				testenv.Missing(t, "node is not on PATH: the final TypeScript client is not tested with --auth")
			}
			modules := filepath.Join(npmtest.Install(t, tsFinal), "node_modules")
			flow, err := filepath.Abs(filepath.Join("tsfinal", "appkeys.js"))
			if err != nil {
				t.Fatal(err)
			}
			// The test's certificate trusted with no change to the client:
			// grpc-js takes its roots from GRPC_DEFAULT_SSL_ROOTS_FILE_PATH
			// (Node's NODE_EXTRA_CA_CERTS does not reach the secure context
			// it makes), fetch from NODE_EXTRA_CA_CERTS.
			runTSFlow(t, s, nodeBin, modules, flow, "keys_ts", 5, "FOLIO_OWNER_ID="+owner.ClientID,
				"FOLIO_OWNER_SECRET="+owner.ClientSecret, "NODE_EXTRA_CA_CERTS="+certFile, "GRPC_DEFAULT_SSL_ROOTS_FILE_PATH="+certFile)
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
