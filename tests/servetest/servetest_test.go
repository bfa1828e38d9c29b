package servetest_test

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
)

func TestMain(m *testing.M) { os.Exit(servetest.Main(m)) }

// A server on each engine answers, takes the extra flags (--auth: a call
// without a token is refused; the owner file is written where it was
// told), and stops cleanly on SIGTERM.
func TestStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the folio binary")
	}
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		owner := filepath.Join(t.TempDir(), "owner.json")
		s := servetest.Start(t, servetest.Options{Backend: b, Args: []string{"--auth", "--owner-file", owner}})
		if !strings.Contains(s.Output(), "engine="+b.Name) {
			t.Errorf("not on the %s engine:\n%s", b.Name, s.Output())
		}
		res, err := http.Post("http://"+s.Addr+"/v1/databases/list", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("a call without a token under --auth: %s %s", res.Status, body)
		}
		if _, err := os.Stat(owner); err != nil {
			t.Errorf("no owner file where --owner-file said: %v", err)
		}
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s.Output(), `msg="folio stopped"`) {
			t.Errorf("no clean stop in:\n%s", s.Output())
		}
		if err := s.Stop(); err != nil {
			t.Errorf("a second Stop: %v", err)
		}
	})
}
