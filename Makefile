# Release builds of jig and jig-server. Needs only Go (and tar, zip,
# sha256sum). "make release VERSION=v1.2.3" writes dist/ with one archive
# per platform and SHA256SUMS; "make cross" only checks that all six
# platforms build (CI runs it).

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
DATE    ?= $(shell git log -1 --format=%cI 2>/dev/null || date -u +%Y-%m-%dT%H:%M:%SZ)
PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
BI := github.com/jigkit/jig/internal/buildinfo
LDFLAGS := -s -w -X $(BI).version=$(VERSION) -X $(BI).commit=$(COMMIT) -X $(BI).date=$(DATE)
DIST := dist
# BIN is where "make build" writes jig and jig-server (the bench scripts
# build into their own directory with it).
BIN ?= bin/

.PHONY: build cross release clean

build:
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/jig ./cmd/jig-server

# cross builds every platform into a throw-away directory.
cross:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; echo "build $$os/$$arch"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags '$(LDFLAGS)' -o "$$tmp/$$os-$$arch/" ./cmd/jig ./cmd/jig-server; \
	done

release: clean
	@set -e; mkdir -p $(DIST); \
	for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; name=jig_$(VERSION)_$${os}_$${arch}; dir=$(DIST)/$$name; \
	  echo "build $$name"; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch go build -trimpath -ldflags '$(LDFLAGS)' -o "$$dir/" ./cmd/jig ./cmd/jig-server; \
	  cp README.md CHANGELOG.md "$$dir/"; cp -R docs "$$dir/docs"; \
	  if [ "$$os" = windows ]; then (cd $(DIST) && zip -qr "$$name.zip" "$$name"); \
	  else tar -C $(DIST) -czf "$(DIST)/$$name.tar.gz" "$$name"; fi; \
	  rm -rf "$$dir"; \
	done; \
	cd $(DIST) && sha256sum jig_* > SHA256SUMS && cat SHA256SUMS

clean:
	rm -rf $(DIST)
