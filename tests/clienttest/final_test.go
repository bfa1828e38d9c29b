package clienttest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/npmtest"
	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/testenv"
)

// tsFinal is @tigrisdata/core 1.3.0, the final TypeScript client
// (tsfinal/package-lock.json pins its tree; the json-bigint it asks for
// from a source repository is overridden to the registry's 1.0.0).
var tsFinal = npmtest.Project{Name: "clienttest-final", Dir: "tsfinal",
	Ready: filepath.Join("@tigrisdata", "core", "dist", "index.js"), Env: "FOLIO_FINALCLIENTS_NPM_DIR"}

// TestFinalClients runs the final official clients, unchanged, against a
// real `folio serve` on each engine: tigris-client-go v1.0.0 (the module in
// final/) over gRPC, its default, and over HTTP (build tags tigris_http and
// tigris_grpc), and @tigrisdata/core 1.3.0 (tsfinal/flow.js) under node.
// Each runs an application's whole flow on a project of its own and
// checks every answer; a failure shows the client's output and the
// server's request log. The Go client runs its flows on each transport:
// TestApplicationFlow (collections), TestSearchFlow (its search
// package: indexes of their own, words, facets, vectors), TestCacheFlow,
// and TestAggregateFlow (its documents grouped by Folio's own call).
func TestFinalClients(t *testing.T) {
	if testing.Short() {
		t.Skip("builds folio and two client test binaries, installs an npm package: not in -short")
	}
	goFlows := buildGoFlows(t)
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "node is not on PATH: the final TypeScript client is not tested")
	}
	modules := filepath.Join(npmtest.Install(t, tsFinal), "node_modules")
	tsFlow, err := filepath.Abs(filepath.Join("tsfinal", "flow.js"))
	if err != nil {
		t.Fatal(err)
	}
	tsCache, err := filepath.Abs(filepath.Join("tsfinal", "cache.js"))
	if err != nil {
		t.Fatal(err)
	}
	tsUnique, err := filepath.Abs(filepath.Join("tsfinal", "unique.js"))
	if err != nil {
		t.Fatal(err)
	}

	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		s := servetest.Start(t, servetest.Options{Backend: b, Args: []string{"--log-requests"}})
		// One project per client, so that the flows do not meet.
		t.Run("go over gRPC", func(t *testing.T) {
			runGoFlow(t, s, goFlows.grpc, "TestApplicationFlow", "grpc://"+s.Addr, "shop_go_grpc")
		})
		t.Run("go over HTTP", func(t *testing.T) {
			runGoFlow(t, s, goFlows.http, "TestApplicationFlow", "http://"+s.Addr, "shop_go_http")
		})
		t.Run("go search over gRPC", func(t *testing.T) {
			runGoFlow(t, s, goFlows.grpc, "TestSearchFlow", "grpc://"+s.Addr, "search_go_grpc")
		})
		t.Run("go search over HTTP", func(t *testing.T) {
			runGoFlow(t, s, goFlows.http, "TestSearchFlow", "http://"+s.Addr, "search_go_http")
		})
		t.Run("go aggregate over gRPC", func(t *testing.T) {
			runGoFlow(t, s, goFlows.grpc, "TestAggregateFlow", "grpc://"+s.Addr, "agg_go_grpc")
		})
		t.Run("go aggregate over HTTP", func(t *testing.T) {
			runGoFlow(t, s, goFlows.http, "TestAggregateFlow", "http://"+s.Addr, "agg_go_http")
		})
		t.Run("go cache over gRPC", func(t *testing.T) {
			runGoFlow(t, s, goFlows.grpc, "TestCacheFlow", "grpc://"+s.Addr, "cache_go_grpc")
		})
		t.Run("go cache over HTTP", func(t *testing.T) {
			runGoFlow(t, s, goFlows.http, "TestCacheFlow", "http://"+s.Addr, "cache_go_http")
		})
		t.Run("go unique over gRPC", func(t *testing.T) {
			runGoFlow(t, s, goFlows.grpc, "TestUniqueFlow", "grpc://"+s.Addr, "unique_go_grpc")
		})
		t.Run("go unique over HTTP", func(t *testing.T) {
			runGoFlow(t, s, goFlows.http, "TestUniqueFlow", "http://"+s.Addr, "unique_go_http")
		})
		t.Run("go ttl over gRPC", func(t *testing.T) {
			runGoFlow(t, s, goFlows.grpc, "TestTTLFlow", "grpc://"+s.Addr, "ttl_go_grpc")
		})
		t.Run("go ttl over HTTP", func(t *testing.T) {
			runGoFlow(t, s, goFlows.http, "TestTTLFlow", "http://"+s.Addr, "ttl_go_http")
		})
		t.Run("typescript", func(t *testing.T) {
			runTSFlow(t, s, nodeBin, modules, tsFlow, "shop_ts", 19)
		})
		t.Run("typescript cache", func(t *testing.T) {
			runTSFlow(t, s, nodeBin, modules, tsCache, "cache_ts", 9)
		})
		t.Run("typescript unique", func(t *testing.T) {
			runTSFlow(t, s, nodeBin, modules, tsUnique, "unique_ts", 6)
		})
	})
}

// goFlows are the compiled tests of the module in final/: one with the
// client's default (gRPC only), one with its HTTP driver as well.
type goFlowBinaries struct{ grpc, http string }

var (
	goFlowsOnce sync.Once
	goFlows     goFlowBinaries
	goFlowsErr  error
)

// buildGoFlows compiles final/'s tests twice, once per transport. The
// module's go.sum pins everything, so the build needs the module proxy
// only where the module cache lacks the client (once per machine).
func buildGoFlows(t *testing.T) goFlowBinaries {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool on PATH to build the final Go client's flow")
	}
	dir, err := filepath.Abs("final")
	if err != nil {
		t.Fatal(err)
	}
	goFlowsOnce.Do(func() {
		out, err := os.MkdirTemp("", "folio-finalclient-")
		if err != nil {
			goFlowsErr = err
			return
		}
		build := func(name string, tags ...string) string {
			bin := filepath.Join(out, name)
			args := []string{"test", "-c", "-o", bin}
			if len(tags) > 0 {
				args = append(args, "-tags", strings.Join(tags, ","))
			}
			cmd := exec.Command(goTool, args...)
			cmd.Dir = dir
			// The nested module alone: no workspace of the caller's.
			cmd.Env = append(os.Environ(), "GOWORK=off")
			if b, err := cmd.CombinedOutput(); err != nil && goFlowsErr == nil {
				goFlowsErr = fmt.Errorf("go test -c %s in %s: %v\n%s", strings.Join(tags, ","), dir, err, b)
			}
			return bin
		}
		goFlows = goFlowBinaries{grpc: build("flow-grpc.test"), http: build("flow-http.test", "tigris_http", "tigris_grpc")}
	})
	if goFlowsErr != nil {
		t.Fatal(goFlowsErr)
	}
	return goFlows
}

// clientEnv is the environment the clients run in: none of the variables
// by which they would pick up another server, project, branch or
// credentials (and switch to TLS), nor Folio's own.
func clientEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TIGRIS_") && !strings.HasPrefix(kv, "FOLIO_") && !strings.HasPrefix(kv, "NODE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// runGoFlow runs the compiled flow named test against url with the
// project.
func runGoFlow(t *testing.T, s *servetest.Server, bin, test, url, project string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.v", "-test.count=1", "-test.run", "^"+test+"$")
	cmd.Dir = t.TempDir()
	cmd.Env = clientEnv("FOLIO_URL="+url, "FOLIO_PROJECT="+project)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("the final Go client's %s against %s failed: %v\n%s", test, url, err, out)
		t.Logf("folio's log:\n%s", s.Output())
		return
	}
	// A flow that skipped ran nothing.
	if !strings.Contains(string(out), "--- PASS: "+test+" ") {
		t.Errorf("the final Go client's %s did not run:\n%s", test, out)
	}
}

// tsFlowResult is what tsfinal/flow.js writes.
type tsFlowResult struct {
	Steps  []string `json:"steps"`
	Failed []struct {
		Step, Error string
	} `json:"failed"`
}

// runTSFlow runs a flow of tsfinal/ under node against the server; steps
// is how many the flow has, extra more of its environment.
func runTSFlow(t *testing.T, s *servetest.Server, nodeBin, modules, flow, project string, steps int, extra ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	result := filepath.Join(dir, "result.json")
	cmd := exec.CommandContext(ctx, nodeBin, flow, result)
	// The client loads .env files from the application's root, which
	// app-root-path takes from APP_ROOT_PATH: an empty directory, so that
	// no file there changes its settings.
	cmd.Dir = dir
	cmd.Env = clientEnv(append([]string{"NODE_PATH=" + modules, "APP_ROOT_PATH=" + dir, "FOLIO_URL=" + s.Addr, "FOLIO_PROJECT=" + project}, extra...)...)
	out, err := cmd.CombinedOutput()
	var res tsFlowResult
	data, rerr := os.ReadFile(result)
	if rerr == nil {
		rerr = json.Unmarshal(data, &res)
	}
	if err != nil || rerr != nil || len(res.Failed) > 0 {
		t.Errorf("the final TypeScript client's %s against %s failed (%v, result %v):\n%s", filepath.Base(flow), s.Addr, err, rerr, out)
		t.Logf("folio's log:\n%s", s.Output())
		return
	}
	// Every step of the flow ran: fewer means the flow stopped early.
	if len(res.Steps) < steps {
		t.Errorf("the final TypeScript client's %s ran %d steps of %d: %q", filepath.Base(flow), len(res.Steps), steps, res.Steps)
	}
}
