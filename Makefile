# git-secure build, test and measurement targets.
GO        ?= go
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
# git runs "man git-secure" for "git secure --help" and "git help secure".
MANDIR    ?= $(PREFIX)/share/man
# bash-completion loads completions/git-secure when git's completion meets
# "git secure"; zsh's _git calls _git-secure from $fpath.
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
VERSION   ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/git-secure/git-secure/internal/cli.Version=$(VERSION)
FUZZTIME  ?= 20s
# urfave_cli_no_docs: leave out urfave/cli's unused man page generator, whose
# markdown parser would initialise at every start of the binary (every hook).
TAGS      := urfave_cli_no_docs
# A static binary (no cgo: git-secure needs none) starts 1-1.5 ms faster
# than one the dynamic loader has to link: it starts on every push, twice.
CGO       := CGO_ENABLED=0

.PHONY: all build install uninstall test test-nofastpath test-short bench fuzz vet fmt clean stress dist

all: build

build: ## build ./bin/git-secure, its manual pages (bin/man/man1) and shell completion (bin/completion)
	@test -d "$$($(GO) env GOMODCACHE)/github.com/theupdateframework/go-tuf" || echo "first build on this machine: go downloads the modules go.sum pins (about 72 MB) and compiles them; this takes minutes (5.5 on a fresh 2-core machine), later builds about a second"
	$(CGO) $(GO) build -trimpath -tags '$(TAGS)' -ldflags '$(LDFLAGS)' -o bin/git-secure ./cmd/git-secure
	ln -sf git-secure bin/git-remote-secure
	rm -rf bin/man bin/completion
	bin/git-secure man --dir bin/man/man1
	mkdir -p bin/completion
	bin/git-secure completion bash >bin/completion/git-secure
	bin/git-secure completion zsh >bin/completion/_git-secure

install: build ## install git-secure on PATH ($(BINDIR)), its manual pages and bash/zsh completion; git then runs it as "git secure"
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 bin/git-secure $(DESTDIR)$(BINDIR)/git-secure
	ln -sf git-secure $(DESTDIR)$(BINDIR)/git-remote-secure
	rm -f $(DESTDIR)$(MANDIR)/man1/git-secure.1 $(DESTDIR)$(MANDIR)/man1/git-secure-*.1
	install -m 0644 bin/man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 bin/completion/git-secure $(DESTDIR)$(BASHCOMPDIR)/git-secure
	install -m 0644 bin/completion/_git-secure $(DESTDIR)$(ZSHCOMPDIR)/_git-secure

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/git-secure $(DESTDIR)$(BINDIR)/git-remote-secure
	rm -f $(DESTDIR)$(MANDIR)/man1/git-secure.1 $(DESTDIR)$(MANDIR)/man1/git-secure-*.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/git-secure $(DESTDIR)$(ZSHCOMPDIR)/_git-secure

dist: ## static binaries for linux, darwin, windows on amd64 and arm64, version from git, with SHA256SUMS (dist/)
	VERSION=$(VERSION) GO=$(GO) TAGS='$(TAGS)' ./scripts/dist.sh dist

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w $$(git ls-files '*.go')

test: build ## unit, integration and attack tests (real git, real keys, real servers), with the in-process readers and then without
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 60m ./...
	$(MAKE) test-nofastpath

# The in-process readers (internal/gitrepo/fastpath) re-implement parts of
# git and parse what an attacker may have written: the whole suite runs
# again with all of them off, everything through git, so that git-secure
# behaves the same either way.
test-nofastpath: ## the suite with every in-process reader off (GIT_SECURE_NO_FASTPATH=1)
	GIT_SECURE_NO_FASTPATH=1 $(GO) test -count=1 -timeout 60m ./...

test-short:
	$(GO) test -short ./...

bench: build ## benchmarks: verify 100 to 1 000 000 entries (CLI; Go up to 10 000), record, rsl log, verify --at, clones and pushes per transport; PASS/FAIL per target
	./scripts/bench.sh

stress: build ## push races (8 x 50) and crash kills against loopback servers, bounded in time
	./scripts/stress.sh

fuzz: ## run every fuzz target for $(FUZZTIME)
	./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin .bench dist
