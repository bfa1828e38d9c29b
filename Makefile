# Folio's build and test entry points. `make test` is what CI runs.

GO ?= go

.PHONY: test test-short bench serve vet fmt

# The whole test suite, with the race detector, on every backend available.
test: vet
	$(GO) test -race -count=1 -timeout 20m ./...

# Skips the slow tests (crash test, large property tests).
test-short:
	$(GO) test -short -count=1 ./...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1; }
	$(GO) vet ./...

# Storage benchmarks (see docs/benchmarks.md for recorded results).
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s ./internal/kv/...

serve:
	$(GO) run ./cmd/folio serve
