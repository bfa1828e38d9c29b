package loadgen

import (
	"io"
	"net/http"
	"strings"
	"time"
)

// Yardstick returns a trivial HTTP handler that answers the FolioDriver's
// requests with fixed answers of the API's shape: a read streams one ~1 KB
// document, an update modified one, a transaction begins and commits. It
// reads each body and parses nothing. Measured by the same client as the
// server, it shows the cost of HTTP and JSON alone (client and server side
// of the protocol, no storage), the floor under every Folio figure.
func Yardstick() http.Handler {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	doc := Dataset{Docs: 1, Seed: 1}.Document(0)
	answers := map[string][]byte{
		"/documents/read": []byte(`{"result":{"data":` + string(doc) + `,"metadata":{"created_at":"` + now +
			`"},"resume_token":"MGQAHzMAAR8zAAE="}}` + "\n"),
		"/documents/update":      []byte(`{"metadata":{"updated_at":"` + now + `"},"status":"updated","modified_count":1}`),
		"/documents/insert":      []byte(`{"metadata":{"created_at":"` + now + `"},"status":"inserted","keys":[{"id":1}]}`),
		"/documents/delete":      []byte(`{"metadata":{"deleted_at":"` + now + `"},"status":"deleted"}`),
		"/transactions/begin":    []byte(`{"tx_ctx":{"id":"0b0e4a4c-43b8-4bd5-8c3a-bf5b51a0e5a0","origin":"yardstick"}}`),
		"/transactions/commit":   []byte(`{"status":"committed"}`),
		"/transactions/rollback": []byte(`{"status":"rolled back"}`),
	}
	other := []byte(`{"status":"ok"}`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		answer := other
		if i := strings.LastIndexByte(r.URL.Path, '/'); i > 0 {
			if j := strings.LastIndexByte(r.URL.Path[:i], '/'); j >= 0 {
				if a, ok := answers[r.URL.Path[j:]]; ok {
					answer = a
				}
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	})
}
