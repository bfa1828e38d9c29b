package consoletest

import (
	"context"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

// What the tab's pages are found by: the hooks the console keeps for
// these tests (app.js's top comment, and each page module's).

// pageSel is the CSS selector of a page's root, ready if asked.
func pageSel(name string, ready bool) string {
	s := fmt.Sprintf(`[data-page=%q]`, name)
	if ready {
		s += `[data-ready="1"]`
	}
	return s
}

// testSel is the CSS selector of a control, by its data-test name, with
// more attribute conditions if given ("[data-db=\"x\"]").
func testSel(name string, more ...string) string {
	return fmt.Sprintf(`[data-test=%q]`, name) + strings.Join(more, "")
}

// attr is an attribute condition of a selector, its value quoted.
func attr(name, value string) string { return fmt.Sprintf(`[%s=%s]`, name, jsString(value)) }

// credentials are an application's id and secret, for the sign-in page.
type credentials struct{ id, secret string }

// as makes the tab sign in with id and secret (rather than the owner's)
// whenever the console asks.
func (tb *tab) as(id, secret string) *tab {
	tb.creds = &credentials{id, secret}
	return tb
}

// open loads path in the tab, as a bookmark or a shared link does (a full
// load, not the router's), and waits until the page named is ready. Under
// --auth a full load starts without a token (the console keeps it in
// memory only), so the sign-in page comes first: open signs in with the
// tab's credentials (the owner's unless as said otherwise) and the
// console then goes on to the page asked for.
func (tb *tab) open(path, pageName string) {
	tb.t.Helper()
	tb.do("open "+path, navigate(tb, path))
	if tb.c.secured() && pageName != "signin" {
		tb.waitJS("the sign-in page or "+pageName, fmt.Sprintf(`(document.querySelector(%s) || document.querySelector(%s)) !== null`,
			jsString(pageSel("signin", true)), jsString(pageSel(pageName, true))))
		if eval[bool](tb, fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(pageSel("signin", true)))) {
			tb.signIn()
		}
	}
	tb.waitPage(pageName)
}

// signIn fills the sign-in page, showing, with the tab's credentials.
func (tb *tab) signIn() {
	tb.t.Helper()
	creds := credentials{tb.c.owner.ClientID, tb.c.owner.ClientSecret}
	if tb.creds != nil {
		creds = *tb.creds
	}
	tb.fill(testSel("signin-id"), creds.id)
	tb.fill(testSel("signin-secret"), creds.secret)
	tb.click(testSel("signin-submit"))
}

// waitPage waits until the page named is the one shown, and ready.
func (tb *tab) waitPage(name string) {
	tb.t.Helper()
	tb.waitJS("page "+name, fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(pageSel(name, true))))
}

// waitFor waits until an element matches the CSS selector.
func (tb *tab) waitFor(sel string) {
	tb.t.Helper()
	tb.waitJS(sel, fmt.Sprintf(`document.querySelector(%s) !== null`, jsString(sel)))
}

// waitText waits until the element the selector finds shows text.
func (tb *tab) waitText(sel, text string) {
	tb.t.Helper()
	tb.waitJS(fmt.Sprintf("%q in %s", text, sel), fmt.Sprintf(`(() => { const el = document.querySelector(%s); return el !== null && el.textContent.includes(%s); })()`,
		jsString(sel), jsString(text)))
}

// count is the number of elements the CSS selector finds.
func (tb *tab) count(sel string) int {
	tb.t.Helper()
	return eval[int](tb, fmt.Sprintf(`document.querySelectorAll(%s).length`, jsString(sel)))
}

// text is what the first element the selector finds shows.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, fmt.Sprintf(`(() => { const el = document.querySelector(%s); return el === null ? "" : el.textContent; })()`, jsString(sel)))
}

// texts is what every element the selector finds shows.
func (tb *tab) texts(sel string) []string {
	tb.t.Helper()
	return eval[[]string](tb, fmt.Sprintf(`Array.from(document.querySelectorAll(%s), (el) => el.textContent)`, jsString(sel)))
}

// fill sets a form control's value, as typing it (all at once) would:
// with the input event the page may listen to.
func (tb *tab) fill(sel, value string) {
	tb.t.Helper()
	tb.waitFor(sel)
	ok := eval[bool](tb, fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (!el) return false;
		el.focus(); el.value = %s; el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`,
		jsString(sel), jsString(value)))
	if !ok {
		tb.fail("no %s to fill", sel)
	}
}

// check ticks a checkbox (unticks it if on is false).
func (tb *tab) check(sel string, on bool) {
	tb.t.Helper()
	tb.waitFor(sel)
	eval[bool](tb, fmt.Sprintf(`(() => { const el = document.querySelector(%s); if (el.checked !== %t) el.click(); return true; })()`, jsString(sel), on))
}

// click clicks the element with the mouse, as a user does (the router
// takes the clicks on links).
func (tb *tab) click(sel string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		tb.fail("click %s: %v", sel, err)
	}
}

// location is the page's address, from its path on.
func (tb *tab) location() string {
	tb.t.Helper()
	return eval[string](tb, `location.pathname + location.search`)
}
