package consoletest

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/foliodb/folio/tests/backendtest"
)

// screenshotsEnv names the directory TestConsoleScreenshots writes to.
const screenshotsEnv = "FOLIO_CONSOLE_SCREENSHOTS"

// TestConsoleScreenshots saves a PNG of each main page of the console
// (1200x800, the browser's window), signed in as the owner on a server
// with --auth, over a small shop: `make console-screenshots` writes them
// to docs/console, which docs/console.md shows. Without FOLIO_CONSOLE_SCREENSHOTS
// it takes none and skips, saying so.
func TestConsoleScreenshots(t *testing.T) {
	dir := os.Getenv(screenshotsEnv)
	if dir == "" {
		t.Skipf("takes the console's screenshots only with %s=DIR (make console-screenshots)", screenshotsEnv)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	startBrowser(t)
	c := startConsole(t, backendtest.All[0], true)
	sampleShop(t, c)
	c.newApplication(t, "dashboard", "reader")
	c.newApplication(t, "importer", "editor")

	tb := newTab(t, c)
	tb.do("set the viewport", chromedp.EmulateViewport(windowWidth, windowHeight))
	shoot := func(name string) {
		t.Helper()
		// No caret or focus ring in the picture.
		eval[chromedpVoid](tb, `document.activeElement && document.activeElement.blur()`)
		png, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		path := filepath.Join(dir, name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", path, len(png))
	}

	tb.do("open the console", navigate(tb, "/console/"))
	tb.waitPage("signin")
	tb.fill(testSel("signin-id"), c.owner.ClientID)
	shoot("signin")

	tb.open("/console/", "databases")
	tb.waitJS("every count", `!document.querySelector('[data-page="databases"]').innerText.includes("…")`)
	shoot("databases")
	tb.open("/console/db/shop", "database")
	shoot("database")
	tb.open("/console/db/shop/c/products", "collection")
	shoot("collection")
	tb.open("/console/db/shop/c/products/docs?"+url.Values{"filter": {`{"price": {"$lt": 100}}`}, "sort": {"-price"}}.Encode(), "documents")
	shoot("documents")
	tb.open(docPath("shop", "products", `{"id":3}`), "document")
	shoot("document")
	tb.open("/console/db/shop/c/products/search?"+url.Values{"q": {"shoe"}, "facets": {"brand,price"}}.Encode(), "search")
	shoot("search")

	tb.open("/console/db/shop/c/orders/live", "live")
	for i := 1; i <= 3; i++ {
		c.insert(t, "shop", "orders", map[string]any{"id": 100 + i, "product": i, "quantity": i, "status": "new"})
	}
	c.call(t, "PUT", "/v1/databases/shop/collections/orders/documents/update",
		map[string]any{"filter": map[string]any{"id": 101}, "fields": map[string]any{"$set": map[string]any{"status": "shipped"}}})
	tb.waitJS("four events", `document.querySelectorAll('[data-test="live-event"]').length === 4`)
	shoot("live")

	// Sampled every second, with requests between the samples, so that
	// the charts have lines.
	tb.open("/console/ops?every=1", "operations")
	for i := 0; i < 4; i++ {
		tb.waitJS("a sample", fmt.Sprintf(`+document.querySelector('[data-test="ops-metrics"]').dataset.samples >= %d`, i+1))
		c.insert(t, "shop", "orders", map[string]any{"id": 200 + i, "product": 1, "quantity": 1, "status": "new"})
	}
	tb.waitJS("five samples", `+document.querySelector('[data-test="ops-metrics"]').dataset.samples >= 5`)
	shoot("operations")
	tb.open("/console/admin", "admin")
	shoot("admin")
}

// sampleShop makes the screenshots' data: a shop with products, orders
// and users, and a second, smaller database.
func sampleShop(t *testing.T, c *console) {
	t.Helper()
	c.call(t, "POST", "/v1/projects/shop/create", nil)
	c.newCollection(t, "shop", "products", map[string]any{
		"id":    map[string]any{"type": "integer"},
		"name":  map[string]any{"type": "string"},
		"brand": map[string]any{"type": "string"},
		"price": map[string]any{"type": "number"},
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"stock": map[string]any{"type": "object", "properties": map[string]any{
			"warehouse": map[string]any{"type": "string"}, "count": map[string]any{"type": "integer"}}},
	})
	brands := []string{"acme", "globex", "initech", "umbrella"}
	things := []string{"running shoe", "walking shoe", "rain coat", "wool hat", "trail shoe", "scarf", "tennis shoe", "backpack"}
	colors := []string{"red", "blue", "green", "black", "white"}
	var products []map[string]any
	for i := 1; i <= 40; i++ {
		products = append(products, map[string]any{
			"id":    i,
			"name":  fmt.Sprintf("%s %s", colors[i%len(colors)], things[i%len(things)]),
			"brand": brands[i%len(brands)],
			"price": float64(20+(i*37)%180) + 0.99,
			"tags":  []string{colors[i%len(colors)], "autumn"},
			"stock": map[string]any{"warehouse": []string{"north", "south"}[i%2], "count": (i * 13) % 50},
		})
	}
	c.insert(t, "shop", "products", products...)
	c.newCollection(t, "shop", "orders", map[string]any{
		"id": map[string]any{"type": "integer"}, "product": map[string]any{"type": "integer"},
		"quantity": map[string]any{"type": "integer"}, "status": map[string]any{"type": "string"},
	})
	var orders []map[string]any
	for i := 1; i <= 25; i++ {
		orders = append(orders, map[string]any{"id": i, "product": 1 + i%40, "quantity": 1 + i%3, "status": []string{"new", "paid", "shipped"}[i%3]})
	}
	c.insert(t, "shop", "orders", orders...)
	c.newCollection(t, "shop", "users", map[string]any{
		"id": map[string]any{"type": "integer"}, "name": map[string]any{"type": "string"}, "email": map[string]any{"type": "string"},
	})
	c.insert(t, "shop", "users",
		map[string]any{"id": 1, "name": "Ann", "email": "ann@example.com"},
		map[string]any{"id": 2, "name": "Bob", "email": "bob@example.com"},
		map[string]any{"id": 3, "name": "Chloé", "email": "chloe@example.com"})
	c.call(t, "POST", "/v1/projects/analytics/create", nil)
	c.newCollection(t, "analytics", "visits", map[string]any{
		"id": map[string]any{"type": "integer"}, "page": map[string]any{"type": "string"}, "ms": map[string]any{"type": "integer"},
	})
	var visits []map[string]any
	for i := 1; i <= 12; i++ {
		visits = append(visits, map[string]any{"id": i, "page": []string{"/", "/shoes", "/coats"}[i%3], "ms": 40 + i*7})
	}
	c.insert(t, "analytics", "visits", visits...)
}
