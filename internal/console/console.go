// Package console serves the web console: static files embedded in the
// binary (an HTML shell, a style sheet and hand-written ES modules) that
// run in the browser and call the public API like any other client. It
// serves files only; every piece of data the console shows comes through
// /v1/, with the caller's token, so auth, roles and limits apply as they
// do to any client.
package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed assets
var assets embed.FS

// Prefix is where the console lives on the API's port.
const Prefix = "/console/"

// assetsPrefix is where its files are: every other path under Prefix is a
// page of the client's router, answered with the shell.
const assetsPrefix = Prefix + "assets/"

// The files the shell names by versioned URLs (see versioned): the entry
// module and the style sheet. Modules imported from the entry keep their
// plain names, so that each is one module instance whoever imports it.
var versionedInShell = []string{"console.css", "js/app.js"}

// contentSecurityPolicy allows the console's own files and nothing else:
// no inline script or style, no other origin, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// contentTypes by extension, fixed here rather than read from the system's
// mime tables, which differ between machines (a module served as
// text/plain does not run).
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".json": "application/json",
	".svg":  "image/svg+xml",
	".png":  "image/png",
	".ico":  "image/x-icon",
	".txt":  "text/plain; charset=utf-8",
}

// file is an asset ready to serve.
type file struct {
	body        []byte
	etag        string // quoted, from the content
	contentType string
	hash        string // the content's hash as a versioned name carries it
}

// handler serves the console's files from memory.
type handler struct {
	files map[string]*file // by the path under assets/, "js/app.js"
	// byVersion maps a versioned name, "js/app.3f9a1c2b7d4e.js", to the
	// file it names while its content is the one hashed.
	byVersion map[string]*file
	shell     *file // index.html, its versioned names filled in
}

// Handler serves the console: GET and HEAD of /console/... (an asset under
// /console/assets/, or the shell for every other path, which the client
// routes), and a redirect from / to /console/.
func Handler() http.Handler {
	h, err := newHandler(assets)
	if err != nil {
		panic("console: " + err.Error()) // the embedded files are the binary's own
	}
	return h
}

func newHandler(fsys fs.FS) (*handler, error) {
	root, err := fs.Sub(fsys, "assets")
	if err != nil {
		return nil, err
	}
	h := &handler{files: map[string]*file{}, byVersion: map[string]*file{}}
	err = fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		f := newFile(name, body)
		h.files[name] = f
		h.byVersion[versionedName(name, f.hash)] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	index, ok := h.files["index.html"]
	if !ok {
		return nil, fs.ErrNotExist
	}
	shell := index.body
	for _, name := range versionedInShell {
		if f, ok := h.files[name]; ok {
			shell = bytes.ReplaceAll(shell, []byte(`"`+assetsPrefix+name+`"`), []byte(`"`+assetsPrefix+versionedName(name, f.hash)+`"`))
		}
	}
	h.shell = newFile("index.html", shell)
	return h, nil
}

func newFile(name string, body []byte) *file {
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:6])
	ct := contentTypes[path.Ext(name)]
	if ct == "" {
		ct = "application/octet-stream"
	}
	return &file{body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`, contentType: ct, hash: hash}
}

// versionedName is a file's name with its content's hash before the
// extension: "js/app.js" is "js/app.3f9a1c2b7d4e.js". Its content never
// changes under that name, so browsers may keep it for good.
func versionedName(name, hash string) string {
	ext := path.Ext(name)
	return strings.TrimSuffix(name, ext) + "." + hash + ext
}

// immutable is the cache of a versioned file: a year, never revalidated.
const immutable = "public, max-age=31536000, immutable"

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", contentSecurityPolicy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		http.Error(w, "the console's files are read with GET or HEAD", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	switch {
	case p == "/" || p == strings.TrimSuffix(Prefix, "/"):
		http.Redirect(w, r, Prefix, http.StatusFound)
	case strings.HasPrefix(p, assetsPrefix):
		name := strings.TrimPrefix(p, assetsPrefix)
		if f, ok := h.byVersion[name]; ok {
			serve(w, r, f, immutable)
		} else if f, ok := h.files[name]; ok {
			serve(w, r, f, "no-cache")
		} else {
			// Not the shell: a missing module answered with HTML would
			// fail in the browser with a MIME error that hides the cause.
			http.Error(w, "no such file of the console: "+name, http.StatusNotFound)
		}
	case strings.HasPrefix(p, Prefix):
		serve(w, r, h.shell, "no-cache")
	default:
		http.NotFound(w, r)
	}
}

// serve answers with f: its validator, so that a browser revalidating a
// no-cache file gets a 304 while it is unchanged.
func serve(w http.ResponseWriter, r *http.Request, f *file, cache string) {
	hdr := w.Header()
	hdr.Set("Content-Type", f.contentType)
	hdr.Set("Cache-Control", cache)
	hdr.Set("ETag", f.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
}

// Serves reports whether a request's path is the console's: /, /console
// and everything under /console/. The API has nothing outside /v1/ there.
func Serves(path string) bool {
	return path == "/" || path == strings.TrimSuffix(Prefix, "/") || strings.HasPrefix(path, Prefix)
}
