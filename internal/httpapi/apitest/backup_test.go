package apitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/foliodb/folio/internal/kv"
)

// POST /v1/management/backup: the owner's; a copy on the embedded store,
// a refusal with PostgreSQL's tools named on PostgreSQL; clear errors for
// a directory it cannot take.
func TestBackupCall(t *testing.T) {
	eachAuthBackend(t, func(t *testing.T, s *authServer) {
		s.owner.ok(t, "POST", "/v1/management/namespaces/acme/create", `{"id":5}`)
		admin := s.appClient(t, s.owner, `{"name":"a","namespace":"acme","role":"admin"}`)
		dir := filepath.Join(t.TempDir(), "backup")
		body := `{"dir":` + quote(dir) + `}`
		wantError(t, admin.do(t, "POST", "/v1/management/backup", body), 403, "PERMISSION_DENIED",
			"an application with role 'admin' may not make this call: it needs role 'owner'")
		wantError(t, s.anon.do(t, "POST", "/v1/management/backup", body), 401, "UNAUTHENTICATED", anyMessage)

		for _, bad := range []string{`{}`, `{"dir":"relative/dir"}`} {
			wantError(t, s.owner.do(t, "POST", "/v1/management/backup", bad), 400, "INVALID_ARGUMENT",
				"a backup needs 'dir': an absolute path of a new or empty directory on the server's machine")
		}
		wantError(t, s.owner.do(t, "POST", "/v1/management/backup", `{"dir":1}`), 400, "INVALID_ARGUMENT", anyMessage)

		if _, embedded := s.store.(kv.Checkpointer); !embedded {
			msg := wantError(t, s.owner.do(t, "POST", "/v1/management/backup", body), 412, "FAILED_PRECONDITION", anyMessage)
			for _, advice := range []string{"PostgreSQL", "pg_dump", "pg_basebackup", "folio export"} {
				if !strings.Contains(msg, advice) {
					t.Errorf("the refusal on PostgreSQL does not name %s: %q", advice, msg)
				}
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the refused backup made %s (%v)", dir, err)
			}
			return
		}
		s.owner.createDB(t, "shop")
		res := s.owner.okObject(t, "POST", "/v1/management/backup", body)
		pos, _ := res["position"].(json.Number).Int64()
		if res["dir"] != dir || pos < 1 {
			t.Fatalf("backup answered %v", res)
		}
		if _, err := os.Stat(filepath.Join(dir, "FOLIO_BACKUP.json")); err != nil {
			t.Fatalf("no manifest in the backup: %v", err)
		}
		// Its directory now holds the backup: a second one is refused.
		wantError(t, s.owner.do(t, "POST", "/v1/management/backup", body), 409, "ALREADY_EXISTS", anyMessage)
		// A file where the directory should be.
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, []byte("x"), 0o600)
		wantError(t, s.owner.do(t, "POST", "/v1/management/backup", `{"dir":`+quote(file)+`}`), 412, "FAILED_PRECONDITION", anyMessage)
	})
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
