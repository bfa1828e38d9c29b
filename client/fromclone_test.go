package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// docs/clients.md gives two ways to use the client from a clone (no module
// proxy serves the module path): a replace directive and a workspace. Each
// way's commands, as the docs give them, build the docs' program in a new
// module outside the repository, with downloads off: the client needs
// nothing but the clone.
func TestUseFromAClone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs with the go command")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	checkout, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(checkout, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if _, after, ok := strings.Cut(section, "## Folio's Go client"); ok {
		section, _, _ = strings.Cut(after, "\n## ")
	}
	blocks := regexp.MustCompile("(?s)```(sh|go)\n(.*?)```").FindAllStringSubmatch(section, -1)
	var ways []string
	program := ""
	for _, b := range blocks {
		switch {
		case b[1] == "sh":
			ways = append(ways, b[2])
		case strings.HasPrefix(b[2], "package main"):
			program = b[2]
		}
	}
	if len(ways) != 2 || program == "" {
		t.Fatalf("docs/clients.md's Go client section has %d command blocks and program %t; want the replace's and the workspace's, and a program", len(ways), program != "")
	}
	for i, way := range ways {
		t.Run([]string{"replace", "workspace"}[i], func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(args ...string) {
				t.Helper()
				cmd := exec.Command(goCmd, args...)
				cmd.Dir = dir
				// Downloads off: the build must need nothing but the clone.
				cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOWORK=")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			run("mod", "init", "example.com/hello")
			for _, line := range strings.Split(strings.TrimSpace(way), "\n") {
				fields := strings.Fields(strings.ReplaceAll(line, "$HOME/src/folio", checkout))
				if len(fields) == 0 || fields[0] != "go" {
					t.Fatalf("docs/clients.md: %q is not a go command", line)
				}
				run(fields[1:]...)
			}
			if _, err := os.Stat(filepath.Join(dir, "hello")); err != nil {
				t.Errorf("go build made no program: %v", err)
			}
		})
	}
}
