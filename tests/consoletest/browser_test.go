package consoletest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/foliodb/folio/tests/testenv"
)

// The window every tab has: the screenshots' size too.
const windowWidth, windowHeight = 1200, 800

// The browser of the test binary: one Chromium, started by the first test
// that asks (startBrowser) and stopped by TestMain (stopBrowser).
var browser struct {
	once    sync.Once
	ctx     context.Context // its first tab's; every test's tab is a child
	stop    func()
	missing string // why there is no browser to start
	err     error  // it is there but would not start
}

// chromiumNames are the programs taken for Debian's chromium (its
// /usr/bin/chromium), in order.
var chromiumNames = []string{"chromium", "chromium-browser"}

// startBrowser returns the context of the test binary's browser, starting
// it the first time. Without chromium, tb skips (fails under CI).
func startBrowser(tb testing.TB) context.Context {
	tb.Helper()
	browser.once.Do(func() {
		path := ""
		for _, name := range chromiumNames {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			browser.missing = "no chromium in PATH for the console's browser tests; install Debian's (apt-get install chromium)"
			return
		}
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.WindowSize(windowWidth, windowHeight),
			chromedp.DisableGPU,
		)
		// Chromium's sandbox refuses to run as root (CI runs as root).
		if os.Geteuid() == 0 {
			opts = append(opts, chromedp.NoSandbox)
		}
		// A start can fail on a loaded machine (a run once failed before
		// any test, and the next two passed): three tries, each failure
		// logged, before the tests fail.
		for try := 1; ; try++ {
			alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
			ctx, cancel := chromedp.NewContext(alloc)
			// The first Run starts the browser, for as long as ctx lives: no
			// timeout on it (chromedp.NewContext).
			err := chromedp.Do(ctx)
			if err == nil {
				browser.ctx = ctx
				browser.stop = func() { cancel(); cancelAlloc() }
				return
			}
			cancel()
			cancelAlloc()
			if try == 3 {
				browser.err = fmt.Errorf("start %s (%d tries): %w", path, try, err)
				return
			}
			tb.Logf("start %s, try %d: %v; trying again", path, try, err)
			time.Sleep(time.Second)
		}
	})
	if browser.missing != "" {
		testenv.Missing(tb, browser.missing)
	}
	if browser.err != nil {
		tb.Fatal(browser.err)
	}
	return browser.ctx
}

// stopBrowser stops the browser if a test started it.
func stopBrowser() {
	if browser.stop != nil {
		browser.stop()
	}
}

// tabTimeout bounds one test's whole use of its tab.
const tabTimeout = 2 * time.Minute

// waitTimeout bounds one wait for a page's state.
const waitTimeout = 20 * time.Second

// A tab is a test's own page of the browser, on one console. It watches
// what the page must never do: open a JavaScript dialog (the console asks
// its confirmations in the page; an alert is what a script smuggled in
// data would open), break the content security policy, or throw an
// exception nobody caught. Each is a failure of the test, reported when
// it ends.
type tab struct {
	t     testing.TB
	ctx   context.Context
	c     *console
	creds *credentials // whom to sign in as; nil: the owner

	mu       sync.Mutex
	dialogs  []string // every JavaScript dialog the page opened, as "type: message"
	problems []string // dialogs, CSP violations and uncaught exceptions
	allowed  []string // problems holding one of these were caused on purpose
	closed   bool     // the test is ending: log nothing more
}

// cspReporter runs in every document before its own scripts and notes
// each CSP violation: in window.__folioCSP, and as a console error the test
// sees (Chromium also logs the refusal itself; this names the directive
// and what was blocked).
const cspReporter = `window.__folioCSP = [];
document.addEventListener("securitypolicyviolation", (e) => {
	const what = e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber;
	window.__folioCSP.push(what);
	console.error("CSP violation: " + what);
});`

// newTab opens a tab for t on the console c, closed when t ends.
func newTab(t testing.TB, c *console) *tab {
	t.Helper()
	bctx := startBrowser(t)
	tb := &tab{t: t, c: c}
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithListener(tb.onEvent))
	// The tab lives until the test ends; the timeout bounds a test that
	// hangs. The first Run opens the tab (no timeout on it: a child of a
	// running browser only opens a target).
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		t.Fatalf("open a tab: %v", err)
	}
	tb.ctx, cancel = withCancel(ctx, cancel)
	if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: cspReporter}); err != nil {
		cancel()
		t.Fatalf("install the CSP reporter: %v", err)
	}
	t.Cleanup(func() {
		tb.mu.Lock()
		tb.closed = true
		problems := slices.DeleteFunc(slices.Clone(tb.problems), tb.isAllowed)
		tb.mu.Unlock()
		cancel()
		for _, p := range problems {
			t.Errorf("the page: %s", p)
		}
	})
	return tb
}

// withCancel gives ctx a deadline of tabTimeout, and a cancel that ends
// both.
func withCancel(ctx context.Context, cancel context.CancelFunc) (context.Context, context.CancelFunc) {
	tctx, tcancel := context.WithTimeout(ctx, tabTimeout)
	return tctx, func() { tcancel(); cancel() }
}

// onEvent watches the page's events (on chromedp's reading goroutine: it
// must not block or call the browser, so dialogs are answered from a
// goroutine of their own).
func (tb *tab) onEvent(ev any) {
	switch ev := ev.(type) {
	case *page.EventJavascriptDialogOpening:
		tb.mu.Lock()
		tb.dialogs = append(tb.dialogs, fmt.Sprintf("%s: %s", ev.Type, ev.Message))
		tb.problems = append(tb.problems, fmt.Sprintf("opened a JavaScript %s dialog: %q", ev.Type, ev.Message))
		tb.mu.Unlock()
		// A dialog stops the page's scripts until it is answered.
		go chromedp.Call(tb.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	case *log.EventEntryAdded:
		e := ev.Entry
		if e.Source == log.EntrySourceSecurity || strings.Contains(e.Text, "Content Security Policy") {
			tb.problem("%s: %s (%s)", e.Source, e.Text, e.URL)
		} else if e.Level == log.EntryLevelError || e.Level == log.EntryLevelWarning {
			// Network errors are expected (a refused write is a 403 the
			// browser logs); they are shown, not judged.
			tb.logf("browser log: %s %s: %s %s", e.Level, e.Source, e.Text, e.URL)
		}
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeWarning {
			return
		}
		var args []string
		for _, a := range ev.Args {
			if a.Value != nil {
				args = append(args, string(a.Value))
			} else {
				args = append(args, a.Description)
			}
		}
		msg := strings.Join(args, " ")
		if strings.Contains(msg, "CSP violation") {
			tb.problem("%s", msg)
		} else {
			tb.logf("console.%s: %s", ev.Type, msg)
		}
	case *runtime.EventExceptionThrown:
		tb.problem("uncaught: %s", (&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
	}
}

func (tb *tab) problem(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.problems = append(tb.problems, fmt.Sprintf(format, args...))
}

// logf logs to the test while it runs (events keep coming as it ends).
func (tb *tab) logf(format string, args ...any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if !tb.closed {
		tb.t.Logf(format, args...)
	}
}

// allow says that problems holding any of the texts are the test's own
// doing, to be seen but not failed on.
func (tb *tab) allow(texts ...string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.allowed = append(tb.allowed, texts...)
}

// isAllowed says whether a problem holds an allowed text (tb.mu held).
func (tb *tab) isAllowed(p string) bool {
	return slices.ContainsFunc(tb.allowed, func(t string) bool { return strings.Contains(p, t) })
}

// problemsSoFar returns what the page has done wrong so far, allowed or
// not.
func (tb *tab) problemsSoFar() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.problems...)
}

// chromedpVoid is the result of an evaluation whose value is not used.
type chromedpVoid = chromedp.Void

// navigate is the action of a full load of a path of the console.
func navigate(tb *tab, path string) chromedp.Action[chromedp.Void] {
	return chromedp.Navigate(tb.c.url(path))
}

// Dialogs returns the JavaScript dialogs the page has opened so far.
func (tb *tab) Dialogs() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.dialogs...)
}

// do runs actions in the tab, failing the test on an error.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, actions...); err != nil {
		tb.fail("%s: %v", what, err)
	}
}

// fail ends the test, with what the page shows and its address.
func (tb *tab) fail(format string, args ...any) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	where, _ := chromedp.Run(ctx, chromedp.Location())
	shown, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if len(shown) > 2000 {
		shown = shown[:2000] + "…"
	}
	tb.t.Fatalf("%s\nat %s the page shows:\n%s", fmt.Sprintf(format, args...), where, shown)
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.fail("evaluate %s: %v", expr, err)
	}
	return v
}

// waitJS waits until the JavaScript expression is true in the page,
// checked every 100 ms.
func (tb *tab) waitJS(what, expr string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(waitTimeout)))
	if err != nil {
		tb.fail("waiting for %s (%s): %v", what, expr, err)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
