package kvtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foliodb/folio/internal/kv"
)

// Opener opens a backend's store at a location (a directory, a URL).
type Opener func(location string) (kv.Store, error)

const (
	crashLocationEnv = "FOLIO_KVTEST_CRASH_LOCATION"
	crashRoundEnv    = "FOLIO_KVTEST_CRASH_ROUND"
	crashWriters     = 8
)

// CrashChild turns the current process into the crash test's writer when
// Crash started it, and then never returns. A backend's test binary calls it
// first thing in TestMain:
//
//	func TestMain(m *testing.M) {
//		kvtest.CrashChild(open)
//		os.Exit(m.Run())
//	}
func CrashChild(open Opener) {
	location := os.Getenv(crashLocationEnv)
	if location == "" {
		return
	}
	round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
	s, err := open(location)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: open:", err)
		os.Exit(2)
	}
	var out sync.Mutex
	var next sync.Mutex
	n := 0
	for w := 0; w < crashWriters; w++ {
		go func() {
			for {
				next.Lock()
				n++
				id := fmt.Sprintf("%d-%07d", round, n)
				next.Unlock()
				tx, err := s.Begin(bg)
				if err != nil {
					fmt.Fprintln(os.Stderr, "crash child: begin:", err)
					os.Exit(2)
				}
				for _, part := range []string{"a", "b", "c"} {
					tx.Set([]byte("crash/"+id+"/"+part), []byte(id))
				}
				tx.Add([]byte("crashcount"), 1)
				tx.AppendLog([]byte(id))
				pos, err := tx.Commit(bg)
				if err != nil {
					fmt.Fprintln(os.Stderr, "crash child: commit:", err)
					os.Exit(2)
				}
				// The acknowledgement leaves the process only after Commit
				// returned: everything printed must survive the kill.
				out.Lock()
				fmt.Fprintf(os.Stdout, "ack %s %d\n", id, pos)
				out.Unlock()
			}
		}()
	}
	select {}
}

// Crash runs a writer in a child process (the test binary itself, see
// CrashChild), kills it with SIGKILL in the middle of its load, reopens the
// store and checks that every acknowledged commit is there whole, that no
// transaction is there in part, and that the change log holds exactly the
// transactions that are there. It does this for several rounds on the same
// store.
func Crash(t *testing.T, location string, open Opener) {
	acked := map[string]kv.Position{}
	for round := 1; round <= 3; round++ {
		for id, pos := range crashRound(t, location, round) {
			acked[id] = pos
		}
		checkAfterCrash(t, location, open, acked)
	}
}

func crashRound(t *testing.T, location string, round int) map[string]kv.Position {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashLocationEnv+"="+location, crashRoundEnv+"="+strconv.Itoa(round))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	acked := map[string]kv.Position{}
	lines := bufio.NewScanner(stdout)
	killAt := 300 + round*200
	deadline := time.AfterFunc(20*time.Second, func() { cmd.Process.Signal(syscall.SIGKILL) })
	defer deadline.Stop()
	for lines.Scan() {
		f := strings.Fields(lines.Text())
		if len(f) != 3 || f[0] != "ack" {
			t.Fatalf("crash child printed %q", lines.Text())
		}
		pos, _ := strconv.ParseUint(f[2], 10, 64)
		acked[f[1]] = kv.Position(pos)
		if len(acked) == killAt {
			cmd.Process.Signal(syscall.SIGKILL)
			// Keep reading: lines already in the pipe were acknowledged
			// before the kill.
		}
	}
	cmd.Wait()
	if len(acked) < killAt {
		t.Fatalf("round %d: the writer died after %d commits, before it was killed", round, len(acked))
	}
	return acked
}

func checkAfterCrash(t *testing.T, location string, open Opener, acked map[string]kv.Position) {
	t.Helper()
	s, err := open(location)
	if err != nil {
		t.Fatalf("reopen after crash: %v", err)
	}
	defer s.Close()
	// A store with a server (PostgreSQL) outlives the killed writer: a
	// commit it had sent may still land a moment after the kill, between
	// the check's read of the data and its read of the log. Such a commit
	// shows as a log entry without data; it must be gone (landed in both)
	// within a few seconds, where a torn commit would stay.
	var parts map[string]int
	var inLog map[string]kv.Position
	var count int64
	for wait := 0; ; wait++ {
		parts, count, inLog = crashedState(t, s)
		if len(inLog) == len(parts) || wait == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for id, n := range parts {
		if n != 3 {
			t.Fatalf("transaction %s is torn: %d of its 3 keys survived", id, n)
		}
	}
	for id := range acked {
		if parts[id] != 3 {
			t.Fatalf("acknowledged transaction %s lost in the crash", id)
		}
	}
	if count != int64(len(parts)) {
		t.Fatalf("counter %d, but %d transactions survived", count, len(parts))
	}
	if len(inLog) != len(parts) {
		t.Fatalf("log has %d entries, %d transactions survived", len(inLog), len(parts))
	}
	for id, pos := range acked {
		if inLog[id] != pos {
			t.Fatalf("transaction %s acknowledged at %d, in the log at %d", id, pos, inLog[id])
		}
	}
	// The store goes on from where it was: new positions are higher.
	last, err := s.LastPosition(bg)
	must(t, err)
	w := begin(t, s)
	must(t, w.Set([]byte("after-crash"), []byte("ok")))
	if pos := commit(t, w); pos <= last {
		t.Fatalf("commit after reopen at %d, not after %d", pos, last)
	}
	t.Logf("crash check: %d transactions survived, %d acknowledged", len(parts), len(acked))
}

// crashedState reads what survived a crash: the parts of each writer
// transaction's data and their counter, in one transaction, and each
// transaction's position in the log.
func crashedState(t *testing.T, s kv.Store) (map[string]int, int64, map[string]kv.Position) {
	t.Helper()
	tx := begin(t, s)
	defer tx.Rollback()
	parts := map[string]int{}
	it := tx.Scan(bg, kv.PrefixRange([]byte("crash/")), kv.ScanOptions{})
	for it.Next() {
		f := strings.Split(string(it.Key()), "/")
		if len(f) != 3 || string(it.Value()) != f[1] {
			t.Fatalf("bad key %q = %q", it.Key(), it.Value())
		}
		parts[f[1]]++
	}
	must(t, it.Err())
	it.Close()
	count := counter(t, tx, "crashcount")
	inLog := map[string]kv.Position{}
	for _, e := range logOf(t, s) {
		inLog[string(e.Records[0])] = e.Pos
	}
	return parts, count, inLog
}
