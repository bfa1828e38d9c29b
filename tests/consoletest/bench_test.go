package consoletest

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/foliodb/folio/tests/backendtest"
	"github.com/foliodb/folio/tests/servetest"
)

// benchDocs is the store the first page is measured against (issue 39:
// "under 300 ms on this machine against a store of 100,000 documents").
const benchDocs = 100_000

// readyClock runs in every document before its scripts and notes, with
// the page's own clock (milliseconds since the navigation started), when
// the databases page first says it is ready.
const readyClock = `new MutationObserver((_, obs) => {
	if (document.querySelector('[data-page="databases"][data-ready="1"]')) {
		window.__folioReadyAt = performance.now();
		obs.disconnect();
	}
}).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ["data-ready"]});`

// BenchmarkConsoleFirstPage measures the console's first page, the
// databases with their collections' counts and sizes, in the browser,
// against a store of 100,000 documents (folio bench's, about 1 KB each,
// loaded with `folio bench --workload C --ops 1`, the fastest load there
// is: 16 clients, batches of 500). One op is a full load of /console/, as
// a bookmark opens it, until the page sets data-ready: ms/op is that time
// seen from the test, ready-ms the same moment on the page's clock
// (performance.now(), from the start of the navigation), and load-ms the
// navigation timing's loadEventEnd. The first, cold load is logged apart;
// the loads measured find the assets in the browser's cache (the
// versioned ones kept, the others revalidated), as a returning user does.
// The store is loaded once per engine (b.Loop runs the body once). Not
// part of make test:
//
//	go test -run '^$' -bench BenchmarkConsoleFirstPage -benchtime 20x ./tests/consoletest/
func BenchmarkConsoleFirstPage(b *testing.B) {
	backendtest.EachB(b, func(b *testing.B, be backendtest.Backend) {
		c := startConsole(b, be, false)
		start := time.Now()
		load := exec.Command(servetest.Binary(b), "bench", "--url", c.base, "--docs", fmt.Sprint(benchDocs),
			"--workload", "C", "--ops", "1", "--warmup", "0", "--quiet")
		if out, err := load.CombinedOutput(); err != nil {
			b.Fatalf("folio bench (the load): %v\n%s", err, out)
		}
		b.Logf("%s: %d documents loaded in %v", be.Name, benchDocs, time.Since(start).Round(time.Millisecond))

		tb := newTab(b, c)
		if _, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: readyClock}); err != nil {
			b.Fatal(err)
		}
		cold := firstPageLoad(tb)
		b.Logf("%s: cold load (empty cache): %v, ready at %.1f ms on the page's clock, %s",
			be.Name, cold.wall.Round(time.Microsecond), cold.readyMs, eval[string](tb, `document.querySelector('[data-page="databases"]').innerText.slice(0, 300)`))

		var wallSum time.Duration
		var readySum, loadSum float64
		n := 0
		for b.Loop() {
			m := firstPageLoad(tb)
			wallSum += m.wall
			readySum += m.readyMs
			loadSum += m.loadMs
			n++
		}
		b.ReportMetric(float64(wallSum.Microseconds())/1000/float64(n), "ms/op")
		b.ReportMetric(readySum/float64(n), "ready-ms")
		b.ReportMetric(loadSum/float64(n), "load-ms")
		// Where the last load's time went: each request's start and
		// duration on the page's clock.
		b.Logf("%s: the last load's requests (start +duration, ms):\n%s", be.Name, eval[string](tb,
			`performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource")).map((e) =>
				e.startTime.toFixed(1).padStart(7) + " +" + e.duration.toFixed(1).padStart(6) + "  " + new URL(e.name).pathname).join("\n")`))
	})
}

// A firstPage is one load of the first page, measured.
type firstPage struct {
	wall    time.Duration // navigation to data-ready, seen from here
	readyMs float64       // data-ready on the page's clock
	loadMs  float64       // the navigation timing's loadEventEnd
}

// firstPageLoad loads /console/ in the tab and waits for the databases
// page to be ready.
func firstPageLoad(tb *tab) firstPage {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	start := time.Now()
	err := chromedp.Do(ctx,
		chromedp.Navigate(tb.c.url("/console/")),
		chromedp.WaitReady(chromedp.CSS(`[data-page="databases"][data-ready="1"]`)),
	)
	wall := time.Since(start)
	if err != nil {
		tb.fail("load the first page: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](`window.__folioReadyAt !== undefined && performance.getEntriesByType("navigation")[0].loadEventEnd > 0`)); err != nil {
		tb.fail("the page's own timings: %v", err)
	}
	m, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](
		`({ready: window.__folioReadyAt, load: performance.getEntriesByType("navigation")[0].loadEventEnd})`))
	if err != nil {
		tb.fail("the page's own timings: %v", err)
	}
	return firstPage{wall: wall, readyMs: m["ready"], loadMs: m["load"]}
}
