# ferro's entry points. `make test` is the one command; .ci/run calls it.
#
#   make build        bin/ferro, bin/ferro-vbmc and bin/ferro-agent (static, CGO_ENABLED=0)
#   make test         lint, every test lane, fuzz smoke run
#   make lint         gofmt check and go vet
#   make unit         go test ./... only (PKGS=./internal/store/... to narrow)
#   make fuzz-smoke   every Fuzz* target for $(FUZZTIME)
#   make bench        the load probes under bench/

GO           ?= go
PKGS         ?= ./...
TEST_TIMEOUT ?= 25m
FUZZTIME     ?= 3s
TESTFLAGS    ?=
BENCHFLAGS   ?=

export CGO_ENABLED := 0

# CI must really run everything, never report a cached result.
ifeq ($(CI),true)
TESTFLAGS += -count=1
endif

.PHONY: all build test lint fmt-check vet unit fuzz-smoke bench clean

all: build

# The version and commit `ferro version` prints (git describe; commit hash).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null)

build:
	$(GO) build -trimpath -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o bin/ferro ./cmd/ferro
	$(GO) build -trimpath -o bin/ferro-vbmc ./cmd/ferro-vbmc
	$(GO) build -trimpath -ldflags='-s -w' -o bin/ferro-agent ./cmd/ferro-agent

test: lint unit fuzz-smoke

lint: fmt-check vet

fmt-check:
	@files=$$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -print0 | xargs -0 -r gofmt -l); \
	if [ -n "$$files" ]; then \
		echo "gofmt: these files are not formatted (gofmt -w them):"; echo "$$files"; exit 1; \
	fi; \
	echo "gofmt: ok"

vet:
	$(GO) vet ./...

# scripts/go-test.sh builds bin/ferro once and hands it to the test harness
# ($$FERRO_BIN), then prints go test's output and a summary.
unit:
	@GO=$(GO) scripts/go-test.sh $(TESTFLAGS) -timeout $(TEST_TIMEOUT) $(PKGS)

fuzz-smoke:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz-smoke.sh

# Every main package under bench/ is a probe; each reports its own figures.
bench: build
	@probes=$$($(GO) list -e -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' ./bench/... 2>/dev/null); \
	if [ -z "$$probes" ]; then \
		echo "bench: no probe under bench/ yet (bench/loadprobe will be one); nothing to run"; exit 0; \
	fi; \
	for p in $$probes; do \
		echo "== $$p"; \
		FERRO_BIN=$(CURDIR)/bin/ferro $(GO) run $$p $(BENCHFLAGS) || exit 1; \
	done

clean:
	rm -rf bin
