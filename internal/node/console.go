package node

import (
	"net/http"

	"github.com/foliodb/folio/internal/console"
)

// withConsole serves the web console (internal/console) beside the API on
// its port, unless Config.Console is off: /console/... and a redirect from
// /. Those paths are outside /v1/, so nothing of the API is hidden; the
// console's pages call the API as any client does.
func (n *Node) withConsole(api http.Handler) http.Handler {
	if !n.cfg.Console {
		return api
	}
	files := console.Handler()
	hosts := n.hosts()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A request the API refuses for its Host goes there to be, and
		// so does any but a GET or HEAD: the API's JSON 404 for a POST /
		// stays what it was (the console's files are only read).
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && console.Serves(r.URL.Path) && !hosts.Refuses(r.Host) {
			files.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}
