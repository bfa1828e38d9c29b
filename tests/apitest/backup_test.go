package apitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/kv"
	"github.com/foliodb/folio/internal/node"
	"github.com/foliodb/folio/tests/backendtest"
)

// POST /v1/management/backup: the owner's; a copy on the embedded store,
// a refusal with PostgreSQL's tools named on PostgreSQL; targets only
// under the configured backup directory, and errors that name nothing of
// the server's but what the caller gave.
func TestBackupCall(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		cfg := authConfig(t)
		root := filepath.Join(t.TempDir(), "backups")
		cfg.Ops.BackupDir = root
		s := startAuthServer(t, b.Open(t), cfg)
		backup := func(c *client, dir string) *response {
			return c.do(t, "POST", "/v1/management/backup", `{"dir":`+quote(dir)+`}`)
		}
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{"id":5}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		wantError(t, backup(admin, "nightly"), 403, "PERMISSION_DENIED",
			"an application with role 'admin' may not make this call: it needs role 'owner'")
		wantError(t, backup(s.anon, "nightly"), 401, "UNAUTHENTICATED", anyMessage)

		const needsDir = "a backup needs 'dir': the name of a new or empty directory under the server's backup directory (--backup-dir), or an absolute path inside it"
		wantError(t, s.owner.do(t, "POST", "/v1/management/backup", `{}`), 400, "INVALID_ARGUMENT", needsDir)
		wantError(t, s.owner.do(t, "POST", "/v1/management/backup", `{"dir":1}`), 400, "INVALID_ARGUMENT", anyMessage)

		if _, embedded := s.store.(kv.Checkpointer); !embedded {
			msg := wantError(t, backup(s.owner, "nightly"), 412, "FAILED_PRECONDITION", anyMessage)
			for _, advice := range []string{"PostgreSQL", "pg_dump", "pg_basebackup", "folio export"} {
				if !strings.Contains(msg, advice) {
					t.Errorf("the refusal on PostgreSQL does not name %s: %q", advice, msg)
				}
			}
			if _, err := os.Stat(root); !os.IsNotExist(err) {
				t.Errorf("the refused backup made %s (%v)", root, err)
			}
			return
		}

		// Outside the backup directory: refused before anything is
		// looked at there, the same whether the place exists or not.
		elsewhere := t.TempDir()
		os.WriteFile(filepath.Join(elsewhere, "secret.java"), []byte("x"), 0o600)
		os.MkdirAll(root, 0o750)
		if err := os.Symlink(elsewhere, filepath.Join(root, "link")); err != nil {
			t.Fatal(err)
		}
		const outside = "a backup's 'dir' must be under the server's backup directory (--backup-dir): a name relative to it, or an absolute path inside it, not through a symbolic link"
		for _, dir := range []string{"/etc", elsewhere, filepath.Join(elsewhere, "new"), "../escape", "a/../../escape", root, ".", "link", "link/new", filepath.Join(root, "link", "new")} {
			msg := wantError(t, backup(s.owner, dir), 400, "INVALID_ARGUMENT", outside)
			if strings.Contains(msg, "secret") {
				t.Errorf("the refusal of %s names a file there: %q", dir, msg)
			}
		}
		if _, err := os.Stat(filepath.Join(elsewhere, "new")); !os.IsNotExist(err) {
			t.Errorf("a refused backup made a directory outside the backup directory (%v)", err)
		}

		s.owner.createDB(t, "shop")
		for _, tc := range []struct{ dir, at string }{
			{"nightly", filepath.Join(root, "nightly")},
			{"2026/01/01", filepath.Join(root, "2026", "01", "01")},
			{filepath.Join(root, "absolute"), filepath.Join(root, "absolute")},
		} {
			res := s.owner.okObject(t, "POST", "/v1/management/backup", `{"dir":`+quote(tc.dir)+`}`)
			pos, _ := res["position"].(json.Number).Int64()
			if res["dir"] != tc.at || pos < 1 {
				t.Fatalf("backup into %s answered %v, want it at %s", tc.dir, res, tc.at)
			}
			if _, err := os.Stat(filepath.Join(tc.at, "FOLIO_BACKUP.json")); err != nil {
				t.Fatalf("no manifest in the backup: %v", err)
			}
		}
		// Its directory now holds the backup: a second one is refused,
		// without naming what the directory holds.
		wantError(t, backup(s.owner, "nightly"), 409, "ALREADY_EXISTS",
			"backup into 'nightly': the directory is not empty: give a new or empty one")
		// A file where the directory should be: the server's error stays
		// in its log.
		os.WriteFile(filepath.Join(root, "file"), []byte("x"), 0o600)
		msg := wantError(t, backup(s.owner, "file"), 412, "FAILED_PRECONDITION", anyMessage)
		if want := "backup into 'file': the server cannot create or write that directory; the server's log has the details under request id "; !strings.HasPrefix(msg, want) || strings.Contains(msg, root) {
			t.Errorf("got %q, want %q and an id, and not the server's path", msg, want)
		}
	})
}

// Without a backup directory the call is off: it writes nowhere.
func TestBackupCallOff(t *testing.T) {
	backendtest.Each(t, func(t *testing.T, b backendtest.Backend) {
		store := b.Open(t)
		if _, embedded := store.(kv.Checkpointer); !embedded {
			t.Skip("PostgreSQL refuses every backup with its own advice")
		}
		c := startServer(t, store, node.DefaultConfig())
		dir := filepath.Join(t.TempDir(), "backup")
		wantError(t, c.do(t, "POST", "/v1/management/backup", `{"dir":`+quote(dir)+`}`), 412, "FAILED_PRECONDITION",
			"backups over the API are off on this server: start it with --backup-dir, the directory they go under")
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("the refused backup made %s (%v)", dir, err)
		}
	})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
