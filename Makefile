# git-secure build, test and measurement targets.
GO        ?= go
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/git-secure/git-secure/internal/cli.Version=$(VERSION)
FUZZTIME  ?= 20s
# urfave_cli_no_docs: leave out urfave/cli's unused man page generator, whose
# markdown parser would initialise at every start of the binary (every hook).
TAGS      := urfave_cli_no_docs
# A static binary (no cgo: git-secure needs none) starts 1-1.5 ms faster
# than one the dynamic loader has to link: it starts on every push, twice.
CGO       := CGO_ENABLED=0

.PHONY: all build install uninstall test test-short bench fuzz vet fmt clean stress

all: build

build: ## build ./bin/git-secure
	$(CGO) $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/git-secure ./cmd/git-secure
	ln -sf git-secure bin/git-remote-secure

install: build ## install git-secure on PATH ($(BINDIR)); git then runs it as "git secure"
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 bin/git-secure $(DESTDIR)$(BINDIR)/git-secure
	ln -sf git-secure $(DESTDIR)$(BINDIR)/git-remote-secure

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/git-secure $(DESTDIR)$(BINDIR)/git-remote-secure

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

test: build ## unit, integration and attack tests (real git, real keys, real servers)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

test-short:
	$(GO) test -short ./...

bench: build ## benchmarks: verification of 100 / 1 000 / 10 000 entries, record, hooks
	./scripts/bench.sh

stress: build ## push races (8 x 50) and crash kills against loopback servers, bounded in time
	./scripts/stress.sh

fuzz: ## run every fuzz target for $(FUZZTIME)
	./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin .bench
