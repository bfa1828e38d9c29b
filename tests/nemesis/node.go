package nemesis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/foliodb/folio/client"
)

// node is one `folio serve` process, started again on the same address
// and data after each kill.
type node struct {
	id   string
	addr string // host:port, kept across restarts
	bin  string
	args []string // after serve --addr
	log  *os.File // the process's output, every life of it appended

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
}

func newNode(id, bin, logPath string, args []string) (*node, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &node{id: id, addr: fmt.Sprintf("127.0.0.1:%d", port), bin: bin, args: args, log: f}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startTimeout bounds how long a node may take to serve after a start:
// a node restarted right after a kill waits for its own registration's
// lease to pass, and one whose PostgreSQL is down for it to come back.
const startTimeout = 60 * time.Second

// start runs the process and returns once it answers calls. A process
// that exits at start (its id still held by its killed self's lease,
// PostgreSQL away) is started again until startTimeout.
func (n *node) start(ctx context.Context) error {
	deadline := time.Now().Add(startTimeout)
	for {
		err := n.startOnce(ctx, deadline)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var errExited = errors.New("exited at start")

func (n *node) startOnce(ctx context.Context, deadline time.Time) error {
	cmd := exec.Command(n.bin, append([]string{"serve", "--addr", n.addr, "--node-id", n.id}, n.args...)...)
	cmd.Stdout, cmd.Stderr = n.log, n.log
	cmd.Env = withoutFolioEnv()
	// A harness killed takes its nodes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	fmt.Fprintf(n.log, "=== nemesis: starting %s at %s\n", n.id, time.Now().Format(time.RFC3339Nano))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", n.id, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	n.mu.Lock()
	n.cmd, n.exited, n.paused = cmd, exited, false
	n.mu.Unlock()

	c, err := client.Open("http://"+n.addr, client.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	for {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := c.ListDatabases(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s %w (%v): see its log", n.id, errExited, cmd.ProcessState)
		case <-ctx.Done():
			n.kill()
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			n.kill()
			return fmt.Errorf("%s did not answer within %v: %v", n.id, startTimeout, err)
		}
	}
}

// kill ends the process with SIGKILL (a paused one too) and waits for it.
func (n *node) kill() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.paused = false
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-exited
}

// signal sends sig (SIGSTOP, SIGCONT) to the running process.
func (n *node) signal(sig syscall.Signal) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd == nil {
		return fmt.Errorf("%s is not running", n.id)
	}
	n.paused = sig == syscall.SIGSTOP
	return n.cmd.Process.Signal(sig)
}

// stop ends the node for good: SIGTERM (after SIGCONT if paused), then
// SIGKILL if it takes over 30 s.
func (n *node) stop() {
	n.mu.Lock()
	cmd, exited := n.cmd, n.exited
	n.mu.Unlock()
	if cmd != nil {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}
	n.log.Close()
}

// withoutFolioEnv is the environment without FOLIO_* variables, which
// would otherwise configure the nodes.
func withoutFolioEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if len(kv) < 6 || kv[:6] != "FOLIO_" {
			env = append(env, kv)
		}
	}
	return env
}
