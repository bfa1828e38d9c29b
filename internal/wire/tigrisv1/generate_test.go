package tigrisv1

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/foliodb/folio/tests/testenv"
)

// TestGeneratedCodeIsFresh regenerates the package's code into a
// temporary directory and fails if it differs from the committed files.
func TestGeneratedCodeIsFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("installs the protoc plugins (seconds, or a download the first time)")
	}
	requireProtoc(t)
	out := t.TempDir()
	cmd := exec.Command("bash", "generate.sh", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generate.sh: %v\n%s", err, b)
	}
	fresh := generatedFiles(t, filepath.Join(out, "internal/wire/tigrisv1"))
	committed := generatedFiles(t, ".")
	for name, want := range fresh {
		got, ok := committed[name]
		switch {
		case !ok:
			t.Errorf("%s is missing: stale, run go generate ./internal/wire/...", name)
		case !bytes.Equal(got, want):
			t.Errorf("%s differs from what api/proto generates: stale, run go generate ./internal/wire/...", name)
		}
	}
	for name := range committed {
		if _, ok := fresh[name]; !ok {
			t.Errorf("%s is generated from no .proto file: remove it", name)
		}
	}
}

// TestPluginPinFollowsGoMod checks that generate.sh's protoc-gen-go is
// the google.golang.org/protobuf that go.mod requires: the generated code
// is only promised to work with the runtime of its generator's version.
func TestPluginPinFollowsGoMod(t *testing.T) {
	script, err := os.ReadFile("generate.sh")
	if err != nil {
		t.Fatal(err)
	}
	pin := regexp.MustCompile(`(?m)^PROTOC_GEN_GO=(\S+)$`).FindSubmatch(script)
	if pin == nil {
		t.Fatal("generate.sh sets no PROTOC_GEN_GO")
	}
	gomod, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	req := regexp.MustCompile(`(?m)^\s*google\.golang\.org/protobuf (\S+)`).FindSubmatch(gomod)
	if req == nil {
		t.Fatal("go.mod requires no google.golang.org/protobuf")
	}
	if !bytes.Equal(pin[1], req[1]) {
		t.Errorf("generate.sh pins protoc-gen-go %s, go.mod requires google.golang.org/protobuf %s: change the pin and run go generate ./internal/wire/...", pin[1], req[1])
	}
}

// requireProtoc skips the test (fails it under CI) unless protoc is the
// version generate.sh pins and the well-known types are installed.
func requireProtoc(t *testing.T) {
	t.Helper()
	script, err := os.ReadFile("generate.sh")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^PROTOC_VERSION=(\S+)$`).FindSubmatch(script)
	if want == nil {
		t.Fatal("generate.sh sets no PROTOC_VERSION")
	}
	v, err := exec.Command("protoc", "--version").Output()
	if err != nil {
		testenv.Missing(t, "protoc (apt-get install protobuf-compiler libprotobuf-dev)")
	}
	if got := strings.TrimSpace(string(v)); got != "libprotoc "+string(want[1]) {
		testenv.Missing(t, got+" is not the protoc generate.sh pins, "+string(want[1]))
	}
	if _, err := os.Stat("/usr/include/google/protobuf/timestamp.proto"); err != nil {
		testenv.Missing(t, "protobuf's well-known types (apt-get install libprotobuf-dev)")
	}
}

// generatedFiles reads dir's generated Go files by name.
func generatedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.pb.go"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(name)] = b
	}
	return files
}
