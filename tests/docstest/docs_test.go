package docstest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/tests/servetest"
	"github.com/foliodb/folio/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(servetest.Main(m)) }

// documents are the files whose commands TestDocumentedCommands runs, each
// as one reader's session: one shell's job table and working directory,
// from a fresh server on.
var documents = []string{"README.md", "docs/cli.md"}

// skipped are the documented commands the test cannot run, each with why,
// and what it runs instead ("" for nothing). TestSkippedCommandsAreDocumented
// fails when one is no longer in the documents, so that the list cannot
// outlive them.
var skipped = []struct{ command, why, instead string }{
	{"folio read shop users --json | folio insert --url http://other:8081 shop users",
		"a second server, at the host other", "folio read shop users --json >/dev/null"},
	{"source <(folio completion zsh)", "zsh (the script itself is printed instead)", "folio completion zsh >/dev/null"},
	{"folio completion fish | source", "fish (the script itself is printed instead)", "folio completion fish >/dev/null"},
}

// fixtures are the files the documents' commands read but do not make
// (a reader has their own), written into the session's directory.
// TestFixturesAreUsed fails when one is no longer named.
var fixtures = map[string]string{
	"users.jsonl": `{"id": 10, "name": "Gil", "age": 33}` + "\n" + `{"id": 11, "name": "Hal", "age": 61}` + "\n",
	"sales.csv":   "id,item,amount,paid\n1,pen,2.5,true\n2,ink,12,false\n3,paper,4.25,true\n",
	// written gzipped: zcat reads it
	"big.jsonl.gz": `{"at": "2026-11-28T10:00:00Z", "level": "info", "msg": "started"}` + "\n" +
		`{"at": "2026-11-28T10:00:01Z", "level": "warn", "msg": "slow disk"}` + "\n",
}

// tools are the programs the documents' commands run besides folio: the
// test needs each (and fails under CI without one, which .ci/run
// installs).
var tools = []string{"bash", "curl", "jq", "gzip", "zcat", "tee", "tail"}

// TestDocumentedCommands runs every command of the documents' shell
// blocks, in order, as a reader would, and fails where one does not work
// as written: an exit status other than 0 (or than the one a `# → exit N`
// comment documents), documented output missing (loosely: see Shows), a
// curl call answered with an error body, a follow command (events,
// subscribe) or background job that ended on its own with a failure.
//
// Each command runs in `bash -c`, in a temporary working directory, with
// the folio binary built from this checkout (servetest.Binary) first on
// PATH. Some are recognised and done differently:
//
//   - `folio serve` (also `./folio serve`, `go run ./cmd/folio serve`)
//     starts the session's server with the documented flags
//     (servetest.Start, on a free loopback port, with data of its own),
//     replacing the one before it as a reader stops a server to start
//     another. Until a server is started the commands reach none.
//   - `go build -o X ./cmd/folio` puts the already built binary at X
//     (building it again without -race would take minutes on a cold
//     cache).
//   - `make T` checks that the Makefile has the target T; `make test` is
//     not run from inside itself.
//   - `kill %N` stops the session's job N: the Nth command run with `&`,
//     servers included, as an interactive shell numbers them.
//   - A follow command (`folio events`, `folio subscribe`) not run with
//     `&` is taken as running in another terminal: it runs in the
//     background until its block ends. Any follow command is waited for
//     until its stream is open at the server, and the commands after it
//     until it has printed what was written meanwhile.
//
// The documents name the default server, localhost:8081. The folio
// commands are pointed at the session's server with FOLIO_URL (exported
// for every command: the documents' commands give no --url), and every
// `localhost:8081` in a command (curl's) is rewritten to its address;
// `/tmp/` becomes a directory of the test's.
func TestDocumentedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the folio binary")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, tool+" is not on PATH: the documents' commands use it")
		}
	}
	bin := servetest.Binary(t)
	for _, doc := range documents {
		t.Run(doc, func(t *testing.T) {
			scripts := readScripts(t, doc)
			s := newSession(t, bin)
			for _, script := range scripts {
				s.run(script)
			}
			s.stopJobs(s.jobs, "the document's end")
		})
	}
}

// TestSkippedCommandsAreDocumented keeps the skip list to commands the
// documents still have.
func TestSkippedCommandsAreDocumented(t *testing.T) {
	documented := map[string]bool{}
	for _, doc := range documents {
		for _, s := range readScripts(t, doc) {
			for _, c := range s.Commands {
				documented[Normalize(c.Text)] = true
			}
		}
	}
	for _, sk := range skipped {
		if !documented[Normalize(sk.command)] {
			t.Errorf("skipped command %q is in none of %v: remove it from the list", sk.command, documents)
		}
	}
}

// TestFixturesAreUsed keeps the fixtures to files the commands name.
func TestFixturesAreUsed(t *testing.T) {
	var all strings.Builder
	for _, doc := range documents {
		for _, s := range readScripts(t, doc) {
			for _, c := range s.Commands {
				all.WriteString(c.Text + "\n")
			}
		}
	}
	for name := range fixtures {
		if !strings.Contains(all.String(), name) {
			t.Errorf("fixture %s is named by no command of %v: remove it", name, documents)
		}
	}
}

// readScripts reads a document (a path from the module's root) into its
// scripts.
func readScripts(t *testing.T, doc string) []Script {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(doc)))
	if err != nil {
		t.Fatal(err)
	}
	scripts, err := Scripts(string(b))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	for i := range scripts {
		if len(scripts[i].Commands) == 0 {
			t.Fatalf("%s:%d: a shell block without a command", doc, scripts[i].Line)
		}
	}
	return scripts
}

// commandTimeout bounds a command that is not a job.
const commandTimeout = 60 * time.Second

// session is one reader going through a document: a working directory, a
// server, and the jobs started with `&`.
type session struct {
	t       *testing.T
	dir     string // the working directory
	tmp     string // what the documents' /tmp/ becomes
	bin     string
	srv     *servetest.Server
	jobs    []*job // the job table: %1 is jobs[0]
	follows []*job // follow commands of the current block not run with &
}

func newSession(t *testing.T, bin string) *session {
	s := &session{t: t, dir: t.TempDir(), bin: bin}
	s.tmp = filepath.Join(s.dir, "tmp")
	if err := os.Mkdir(s.tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range fixtures {
		data := []byte(content)
		if strings.HasSuffix(name, ".gz") {
			data = gzipped(t, data)
		}
		if err := os.WriteFile(filepath.Join(s.dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// run runs a block's commands, then checks the output shown after it and
// stops the follow commands it left running.
func (s *session) run(script Script) {
	var outputs []string
	for _, c := range script.Commands {
		outputs = append(outputs, s.command(c)...)
	}
	for _, f := range s.follows {
		outputs = append(outputs, f.out.String())
	}
	s.stopJobs(s.follows, "the end of its block")
	s.follows = nil
	if len(script.Output) == 0 {
		return
	}
	for _, out := range outputs {
		if _, ok := Shows(out, script.Output); ok {
			return
		}
	}
	s.t.Errorf("line %d: no command of the block at line %d prints the output shown:\n%s\noutputs:\n%s",
		script.OutputLine, script.Line, strings.Join(script.Output, "\n"), strings.Join(outputs, "\n--\n"))
}

var (
	serveCommand = regexp.MustCompile(`^(?:go run \./cmd/folio|\S*folio) serve\b([^|;&<>]*)$`)
	buildCommand = regexp.MustCompile(`^go build (?:-o (\S+) )?(\S+)$`)
	makeCommand  = regexp.MustCompile(`^make ([\w -]+)$`)
	killCommand  = regexp.MustCompile(`^kill %(\d+)$`)
	followsCmd   = regexp.MustCompile(`(?:^|[|;&(]\s*)\S*folio (?:events|subscribe)\b`)
	curlCommand  = regexp.MustCompile(`(?:^|[|;&(]\s*)curl\b`)
)

// command runs one command (or does what stands for it) and returns the
// output it printed, if it ran to its end.
func (s *session) command(c Command) []string {
	t := s.t
	text := c.Text
	for _, sk := range skipped {
		if Normalize(sk.command) == Normalize(text) {
			t.Logf("line %d: skipped, it needs %s: %s", c.Line, sk.why, text)
			if text = sk.instead; text == "" {
				return nil
			}
		}
	}
	text = strings.ReplaceAll(text, "/tmp/", s.tmp+"/")
	text = strings.ReplaceAll(text, "localhost:8081", s.addr())
	if m := serveCommand.FindStringSubmatch(text); m != nil {
		s.serve(c, strings.Fields(m[1]))
		return nil
	}
	if m := buildCommand.FindStringSubmatch(text); m != nil {
		s.build(c, m[1], m[2])
		return nil
	}
	if m := makeCommand.FindStringSubmatch(text); m != nil {
		s.makeTargets(c, strings.Fields(m[1]))
		return nil
	}
	if m := killCommand.FindStringSubmatch(text); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > len(s.jobs) {
			t.Errorf("line %d: %s: there is no job %%%d (%d started with &)", c.Line, text, n, len(s.jobs))
			return nil
		}
		s.stopJobs(s.jobs[n-1:n], "kill %"+m[1])
		return nil
	}
	follow := followsCmd.MatchString(text)
	if c.Background || follow {
		j := s.start(c, text)
		if c.Background {
			s.jobs = append(s.jobs, j)
		} else {
			s.follows = append(s.follows, j)
		}
		if follow {
			s.waitStreamOpen(j)
		}
		return nil
	}
	out, code := s.exec(text)
	s.settle()
	switch {
	case code == 127:
		t.Errorf("line %d: %s: a program it runs is missing (status 127):\n%s", c.Line, c.Text, out)
	case code != c.WantExit:
		t.Errorf("line %d: %s: exit status %d, want %d:\n%s", c.Line, c.Text, code, c.WantExit, out)
	}
	if missing, ok := Shows(out, c.Want); !ok {
		t.Errorf("line %d: %s: output lacks %q, which the document shows:\n%s", c.Line, c.Text, missing, out)
	}
	if curlCommand.MatchString(text) && len(c.Want) == 0 && strings.Contains(out, `"error":`) {
		t.Errorf("line %d: %s: the server answered an error the document does not show:\n%s", c.Line, c.Text, out)
	}
	return []string{out}
}

// env is the environment of a command: without the test's own FOLIO_*
// variables, with the binary first on PATH and FOLIO_URL naming the
// session's server (addr).
func (s *session) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FOLIO_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+filepath.Dir(s.bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "FOLIO_URL=http://"+s.addr())
}

// addr is the session's server's address, or, before there is one, an
// address where nothing listens, so that no command reaches another
// server of the machine.
func (s *session) addr() string {
	if s.srv == nil {
		return "127.0.0.1:1"
	}
	return s.srv.Addr
}

func (s *session) bash(text string) *exec.Cmd {
	cmd := exec.Command("bash", "-c", text)
	cmd.Dir = s.dir
	cmd.Env = s.env()
	// Its own process group, so that stopping a job stops its pipeline.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// exec runs text to its end and returns its output (standard output and
// error) and exit status.
func (s *session) exec(text string) (string, int) {
	cmd := s.bash(text)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("%s: %v", text, err)
	}
	timer := time.AfterFunc(commandTimeout, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		s.t.Fatalf("%s: %v", text, err)
	}
	code := cmd.ProcessState.ExitCode()
	if code == -1 {
		return out.String() + fmt.Sprintf("\n(%v; the test stops a command after %v)", cmd.ProcessState, commandTimeout), -1
	}
	return out.String(), code
}

// job is a command left running: in the background (&), or a follow
// command taken as running in another terminal. A server started with &
// is a job too (srv set).
type job struct {
	c      Command
	text   string
	cmd    *exec.Cmd
	out    *servetest.SyncBuffer
	exited chan struct{}
	srv    *servetest.Server
	// checked says the job has been stopped or found failed, and
	// reported: it is not checked again.
	checked bool
}

func (s *session) start(c Command, text string) *job {
	j := &job{c: c, text: text, cmd: s.bash(text), out: &servetest.SyncBuffer{}, exited: make(chan struct{})}
	j.cmd.Stdout, j.cmd.Stderr = j.out, j.out
	if err := j.cmd.Start(); err != nil {
		s.t.Fatalf("%s: %v", text, err)
	}
	go func() {
		j.cmd.Wait()
		close(j.exited)
	}()
	s.t.Cleanup(func() {
		select {
		case <-j.exited:
		default:
			syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
			<-j.exited
		}
	})
	return j
}

// jobStopTimeout is how long a job may take to end once signalled.
const jobStopTimeout = 10 * time.Second

// stopJobs stops jobs as `kill %N` does (SIGTERM, to the job's process
// group), and checks each: one that ended by itself must have exited 0
// (or as documented); one still running must end on the signal, with
// status 0 or killed by it (a pipeline's other programs die of it).
func (s *session) stopJobs(jobs []*job, why string) {
	for _, j := range jobs {
		if !j.checked {
			j.checked = true
			s.stopJob(j, why)
		}
	}
}

func (s *session) stopJob(j *job, why string) {
	if j.srv != nil {
		if err := j.srv.Stop(); err != nil {
			s.t.Errorf("line %d: %s: stopped at %s: %v", j.c.Line, j.c.Text, why, err)
		}
		if s.srv == j.srv {
			s.srv = nil
		}
		return
	}
	if !j.running() {
		if code := j.cmd.ProcessState.ExitCode(); code != j.c.WantExit {
			s.t.Errorf("line %d: %s: ended before %s with status %d, want %d:\n%s", j.c.Line, j.c.Text, why, code, j.c.WantExit, j.out)
			return
		}
	} else {
		syscall.Kill(-j.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-j.exited:
		case <-time.After(jobStopTimeout):
			syscall.Kill(-j.cmd.Process.Pid, syscall.SIGKILL)
			<-j.exited
			s.t.Errorf("line %d: %s: did not end within %v of SIGTERM (%s):\n%s", j.c.Line, j.c.Text, jobStopTimeout, why, j.out)
			return
		}
		st := j.cmd.ProcessState
		if ws, ok := st.Sys().(syscall.WaitStatus); !st.Success() && !(ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM) {
			s.t.Errorf("line %d: %s: stopped at %s, ended with %v:\n%s", j.c.Line, j.c.Text, why, st, j.out)
			return
		}
	}
	if missing, ok := Shows(j.out.String(), j.c.Want); !ok {
		s.t.Errorf("line %d: %s: output lacks %q, which the document shows:\n%s", j.c.Line, j.c.Text, missing, j.out)
	}
}

// serve starts the session's server with a documented `folio serve`'s
// flags (but its address), stopping the one before it.
func (s *session) serve(c Command, args []string) {
	var flags []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--addr" || args[i] == "-addr":
			i++
		case strings.HasPrefix(args[i], "--addr=") || strings.HasPrefix(args[i], "-addr="):
		default:
			flags = append(flags, args[i])
		}
	}
	if s.srv != nil {
		if err := s.srv.Stop(); err != nil {
			s.t.Errorf("line %d: stopping the server before %s: %v", c.Line, c.Text, err)
		}
	}
	s.srv = servetest.Start(s.t, servetest.Options{Args: flags})
	if c.Background {
		s.jobs = append(s.jobs, &job{c: c, srv: s.srv})
	}
}

// build stands for `go build [-o out] pkg`: the binary the test built, put
// at out.
func (s *session) build(c Command, out, pkg string) {
	if pkg != "./cmd/folio" {
		s.t.Errorf("line %d: %s: the test knows how to build ./cmd/folio only", c.Line, c.Text)
		return
	}
	if out == "" {
		out = "folio"
	}
	data, err := os.ReadFile(s.bin)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, out), data, 0o755); err != nil {
		s.t.Fatal(err)
	}
}

// makeTargets checks that the Makefile has each target.
func (s *session) makeTargets(c Command, targets []string) {
	b, err := os.ReadFile("../../Makefile")
	if err != nil {
		s.t.Fatal(err)
	}
	for _, target := range targets {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(b) {
			s.t.Errorf("line %d: %s: the Makefile has no target %s", c.Line, c.Text, target)
		}
	}
}

// settleTimeout bounds the waits for the follow commands to catch up.
const settleTimeout = 10 * time.Second

// waitStreamOpen waits until the server has one more stream open than
// follow jobs running before j, so that what the next commands write
// reaches it, as it does a reader who starts a follow and then writes.
func (s *session) waitStreamOpen(j *job) {
	if s.srv == nil {
		return
	}
	want := 0
	for _, o := range slices.Concat(s.jobs, s.follows) {
		if o.srv == nil && followsCmd.MatchString(o.text) && o.running() {
			want++
		}
	}
	deadline := time.Now().Add(settleTimeout)
	for {
		if !j.running() {
			j.checked = true
			s.t.Errorf("line %d: %s: a follow command that ended by itself (%v):\n%s", j.c.Line, j.c.Text, j.cmd.ProcessState, j.out)
			return
		}
		if m := s.metrics(); m["folio_streams_open"] >= float64(want) {
			return
		}
		if time.Now().After(deadline) {
			s.t.Errorf("line %d: %s: its stream was not open at the server after %v:\n%s", j.c.Line, j.c.Text, settleTimeout, j.out)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle waits, while follow commands run, until the server has handed
// their streams every change written (no reader behind the log's end,
// nothing queued) and their output has stopped growing: what a reader
// waits for before looking.
func (s *session) settle() {
	var running []*job
	for _, j := range slices.Concat(s.jobs, s.follows) {
		if j.srv == nil && followsCmd.MatchString(j.text) && j.running() {
			running = append(running, j)
		}
	}
	if len(running) == 0 || s.srv == nil {
		return
	}
	deadline := time.Now().Add(settleTimeout)
	size := func() (n int) {
		for _, j := range running {
			n += j.out.Len()
		}
		return n
	}
	for time.Now().Before(deadline) {
		m := s.metrics()
		if m[`folio_changelog_reader_lag_positions{reader="streams"}`] != 0 || m["folio_streams_pending_bytes"] != 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		before := size()
		time.Sleep(250 * time.Millisecond)
		if size() == before {
			return
		}
	}
	s.t.Logf("the follow commands had not settled after %v", settleTimeout)
}

// metrics reads the server's metrics without labels, and with their
// labels as written (name{label="value"}).
func (s *session) metrics() map[string]float64 {
	res, err := http.Get("http://" + s.srv.Addr + "/metrics")
	if err != nil {
		s.t.Fatalf("metrics: %v", err)
	}
	defer res.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m
}

func (j *job) running() bool {
	select {
	case <-j.exited:
		return false
	default:
		return true
	}
}

func gzipped(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
