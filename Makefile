# fred: a reversible debugger front end.
# make demo | make test: both install what they need first (make deps).

# The first Go >= go.mod's that internal/deps/check.sh finds (in PATH, or
# where make deps puts it), looked up when a recipe runs: after deps.
GO      ?= $(shell bash internal/deps/check.sh --go-path 2>/dev/null || echo go)
VERSION := $(shell git describe --always --dirty 2>/dev/null || echo dev)
FIXTURES := $(patsubst testdata/%.c,testdata/bin/%,$(wildcard testdata/*.c)) \
	$(patsubst testdata/%.cpp,testdata/bin/%,$(wildcard testdata/*.cpp))

.PHONY: all build deps test demo bench fixtures clean
all: build fixtures

build: bin/fred

# The C libraries fred loads into programs and the debuggers' scripts
# are embedded in it: their sources count too.
bin/fred: $(shell find cmd fred personalities ckpt replaylog watch internal \( -name '*.go' -not -name '*_test.go' -o -name '*.c' -not -path '*/testdata/*' -o -path '*/scripts/*' \) 2>/dev/null) go.mod go.sum
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $@ ./cmd/fred

fixtures: $(FIXTURES)

testdata/bin/%: testdata/%.c
	@mkdir -p testdata/bin
	gcc -g -O0 -o $@ $<

testdata/bin/%: testdata/%.cpp
	@mkdir -p testdata/bin
	g++ -g -O0 -o $@ $<

# Installs gdb, gcc, python3, perl, Go and a CRIU that passes `criu check`
# on this kernel, only if something is missing.
deps:
	@bash internal/deps/check.sh >/dev/null 2>&1 || bash internal/deps/install.sh

# The packages' tests run side by side, as people's machines are loaded:
# they must hold under load.
test: deps
	$(MAKE) all
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 60m ./...

# DEMO=lldb, DEMO=pdb or DEMO=perl for the other debuggers.
DEMO ?= gdb
demo: deps
	$(MAKE) all
	./bin/fred --demo $(DEMO)

bench: deps
	$(MAKE) all
	$(GO) run ./internal/bench

clean:
	rm -rf bin testdata/bin
