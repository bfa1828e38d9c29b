// Package consoletest drives the web console (internal/console, served
// at /console/ by `folio serve`) in a real browser: headless Chromium
// (Debian's chromium package), driven from Go with chromedp, against a
// real `folio serve` (tests/servetest) on each engine, with and without
// --auth. The pages are found by the hooks the console keeps stable for
// these tests: every page's root has data-page="<name>" and, once it has
// loaded, data-ready="1"; its controls have data-test="<name>" (listed at
// the top of internal/console/assets/js/app.js and of each page module).
//
// One Chromium serves the whole test binary; every test gets a tab of its
// own, and every engine one server with --auth and one without, shared by
// its tests, each working in databases of its own. Without chromium on
// PATH the tests skip, saying so, except under CI, where they fail
// (tests/testenv): .ci/run installs it.
//
// FOLIO_CONSOLE_SCREENSHOTS=DIR makes TestConsoleScreenshots save PNGs
// of the main pages there (`make console-screenshots` writes them to
// docs/console); BenchmarkConsoleFirstPage measures the first page
// against a store of 100,000 documents.
package consoletest
