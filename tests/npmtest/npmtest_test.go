package npmtest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const okManifest = `{"private": true, "dependencies": {"a": "1.0.0", "b": "^2.0.0"}}`

const okLock = `{"lockfileVersion": 3, "packages": {
	"": {"dependencies": {"a": "1.0.0", "b": "^2.0.0"}},
	"node_modules/a": {"version": "1.0.0", "integrity": "sha512-AAAA"},
	"node_modules/b": {"version": "2.1.0", "integrity": "sha512-BBBB"},
	"node_modules/b/node_modules/c": {"version": "0.1.0", "integrity": "sha512-CCCC"}}}`

func TestCheckLock(t *testing.T) {
	cases := []struct {
		name, manifest, lock, wantErr string
	}{
		{"pinned", okManifest, okLock, ""},
		{"version 1", okManifest, `{"lockfileVersion": 1, "dependencies": {}}`, "version 1"},
		{"package.json asks for more", `{"dependencies": {"a": "1.0.0", "b": "^2.0.0", "d": "1.0.0"}}`, okLock, "package.json asks for"},
		{"package.json asks for another range", `{"dependencies": {"a": "1.0.1", "b": "^2.0.0"}}`, okLock, "package.json asks for"},
		{"a dev dependency not locked", `{"dependencies": {"a": "1.0.0", "b": "^2.0.0"}, "devDependencies": {"e": "1.0.0"}}`, okLock, "package.json asks for"},
		{"no integrity", okManifest, strings.Replace(okLock, `"integrity": "sha512-CCCC"`, `"resolved": "https://example.com/c.tgz"`, 1), "does not pin node_modules/b/node_modules/c"},
		{"a weak hash", okManifest, strings.Replace(okLock, `sha512-AAAA`, `sha1-AAAA`, 1), "does not pin node_modules/a"},
		{"a link", okManifest, strings.Replace(okLock, `{"version": "1.0.0", "integrity": "sha512-AAAA"}`, `{"link": true, "resolved": "../a"}`, 1), "does not pin node_modules/a"},
		{"no root", okManifest, `{"lockfileVersion": 3, "packages": {}}`, "no root package"},
	}
	for _, c := range cases {
		err := checkLock([]byte(c.manifest), []byte(c.lock))
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.wantErr)
		}
	}
}

// TestCommittedProjects checks every npm project of the repository: each
// has a lockfile that pins its package.json and its whole tree. It needs
// neither npm nor the registry.
func TestCommittedProjects(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var projects []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.Name() == "package.json" {
			projects = append(projects, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The TypeScript client's flow, the schema generator's type check and
	// this package's own: fewer means the walk missed them.
	if len(projects) < 3 {
		t.Fatalf("found npm projects %q, want at least 3", projects)
	}
	for _, p := range projects {
		if _, _, err := Read(p); err != nil {
			t.Error(err)
		}
	}
}

// TestInstallFollowsTheLockfile installs a project whose package.json
// asks for ms ^2.1.0, which the registry resolves to 2.1.3, and whose
// lockfile pins 2.1.1: the lockfile's version must be the one installed.
func TestInstallFollowsTheLockfile(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package: not in -short")
	}
	dir := Install(t, Project{Name: "npmtest", Dir: filepath.Join("testdata", "pinned"), Ready: filepath.Join("ms", "index.js")})
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "ms", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(data, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.Version != "2.1.1" {
		t.Fatalf("installed ms %s, want the lockfile's 2.1.1", pkg.Version)
	}
}
