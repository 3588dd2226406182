# jackdaw — top-level build.
#
#   make            build build/jackdaw
#   make run        install missing Debian packages, build, run the demo DAG on 8 local nodes
#   make check      install missing packages, build, run every test, then again under ASan+UBSan,
#                   then the threaded parts under ThreadSanitizer (check-tsan)
#   make check-tsan the threaded parts' tests under ThreadSanitizer, built into build/tsan
#   make stress     DURATION=30m : random DAGs through real clusters until the time is up
#   make fuzz       the libFuzzer harnesses (clang), build/fuzz/ (tests/fuzz/README.md)
#   make install    PREFIX=/usr/local DESTDIR= : binary, man pages, share/
#
# Quiet unless V=1.  SANITIZE=address,undefined builds into build/san instead, and
# SANITIZE=thread into build/tsan.

PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= gcc
SANITIZE ?=

ifeq ($(SANITIZE),)
BUILD := build
SANFLAGS :=
else ifeq ($(SANITIZE),thread)
# ThreadSanitizer cannot be combined with ASan, so it has a build of its own.
BUILD := build/tsan
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer
else
BUILD := build/san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

PKGS     := libuv libsodium jansson avro-c zlib libdeflate ncursesw
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)

# SimGrid backs `jackdaw sim --engine simgrid` (core/sim/sim_sg*.c), which loads libsimgrid
# at run time in a child process: linked in, its ns-3 initialisers would cost every
# jackdaw command 30 ms at start.  So only those files see its headers, and nothing links
# it; without libsimgrid-dev the engine refuses to run, and the rest builds as before.
SG_CFLAGS := $(shell pkg-config --exists simgrid 2>/dev/null && \
               echo "-DJACKDAW_SIMGRID $$(pkg-config --cflags simgrid)")

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -Werror
CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -D_GNU_SOURCE $(WARN) $(CFLAGS) \
             $(SANFLAGS) -I. $(PKG_CFLAGS) -MMD -MP
LDLIBS   = $(PKG_LIBS) -lm -lpthread

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Every .c under these folders is part of the library; tools/cmd/main.c holds main().
LIB_SRC  := $(shell find core trace workloads tools tui -name '*.c' -not -path 'tools/bench/*' \
              -not -name main.c 2>/dev/null | sort)
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/tools/cmd/main.o
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRC := $(sort $(wildcard tools/bench/*.c))
BENCH_BIN := $(BENCH_SRC:tools/bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps run check test unit integration layers stress-slice stress sanitize install clean bench fuzz \
        check-tsan tsan-tests fuzz-replay fuzz-seeds

all: $(BUILD)/jackdaw $(BENCH_BIN)

deps:
	$(Q)./share/install-deps.sh

$(BUILD)/libjackdaw.a: $(LIB_OBJ)
	@echo "  AR    $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/jackdaw: $(MAIN_OBJ) $(BUILD)/libjackdaw.a
	@echo "  LINK  $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDLIBS)

$(filter $(BUILD)/obj/core/sim/sim_sg%.o,$(LIB_OBJ)): ALL_CFLAGS += $(SG_CFLAGS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC    $<"
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The runtime parts' tests link the fake node (tests/unit/fake_node.c) instead of node.c.
$(BUILD)/tests/test_part_%: tests/unit/test_part_%.c tests/unit/fake_node.c tests/unit/fake_node.h $(BUILD)/libjackdaw.a
	@mkdir -p $(dir $@)
	@echo "  TEST  $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< tests/unit/fake_node.c $(BUILD)/libjackdaw.a $(LDLIBS) -lcmocka

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libjackdaw.a
	@mkdir -p $(dir $@)
	@echo "  TEST  $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libjackdaw.a $(LDLIBS) -lcmocka

$(BUILD)/bench/%: tools/bench/%.c $(BUILD)/libjackdaw.a
	@mkdir -p $(dir $@)
	@echo "  BENCH $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libjackdaw.a $(LDLIBS)

run: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./$(BUILD)/jackdaw gen fanout --tasks 2000 --degree 4 --duration 0.005-0.02 --seed 1 \
	      > $(BUILD)/demo.jsonl
	./$(BUILD)/jackdaw run $(BUILD)/demo.jsonl --nodes 8 --slots 8

unit: $(UNIT_BIN)
	$(Q)for t in $(UNIT_BIN); do \
	    echo "== $$t"; $$t >$$t.log 2>&1 || { cat $$t.log; echo "FAILED: $$t"; exit 1; }; \
	    grep -h 'PASSED' $$t.log; done

integration: $(BUILD)/jackdaw
	$(Q)JACKDAW=$(abspath $(BUILD)/jackdaw) ./tests/integration/run-all.sh

# The randomized stress harness (tests/stress/README.md).  `test` runs its self-test
# (normal build only: it checks the harness, not jackdaw) and a slice of it bounded in
# time, shorter under the sanitizers, whose build runs several times slower; `stress`
# runs it for DURATION (seconds, or 30m, 1h).  STRESS_SEED fixes the master seed
# (random by default, printed); failed runs are kept under $(BUILD)/stress/.
STRESS_WORKERS ?= 2
STRESS_SLICE   ?= $(if $(SANITIZE),35,70)
STRESS_TIMEOUT ?= 30
STRESS_TRACE   ?= 0.1
DURATION       ?= 30m
STRESS_ARGS = --jackdaw $(BUILD)/jackdaw --workers $(STRESS_WORKERS) --run-timeout $(STRESS_TIMEOUT) \
              --trace-fraction $(STRESS_TRACE) \
              $(if $(STRESS_SEED),--master-seed $(STRESS_SEED)) \
              --keep-dir $(BUILD)/stress/failed-$$(date +%Y%m%d-%H%M%S)

stress-slice: $(BUILD)/jackdaw
ifeq ($(SANITIZE),)
	$(Q)JACKDAW=$(abspath $(BUILD)/jackdaw) timeout -k 15 180 bash tests/stress/selftest.sh \
	    >$(BUILD)/stress-selftest.log 2>&1 || { cat $(BUILD)/stress-selftest.log; \
	    echo "FAILED: tests/stress/selftest.sh"; exit 1; }; echo "stress harness self-test: passed"
endif
	$(Q)/usr/bin/python3 tests/stress/stress.py $(STRESS_ARGS) --duration $(STRESS_SLICE) \
	    --max-failures 3 --progress 0

# Beside it, niced so that the clusters keep their CPU, the stealing protocol on a fake
# network (tests/unit/test_progress.c) runs random interleavings for as long.
stress: $(BUILD)/jackdaw $(BUILD)/tests/test_progress
	$(Q)seed=$${STRESS_SEED:-$$(date +%s)}; echo "simulated interleavings: master seed $$seed"; \
	TEST_PROGRESS_SEED=$$seed TEST_PROGRESS_SECONDS=$(DURATION) nice -n 19 \
	    $(BUILD)/tests/test_progress >$(BUILD)/stress-progress.log 2>&1 & sim=$$!; \
	/usr/bin/python3 tests/stress/stress.py $(STRESS_ARGS) --duration $(DURATION) --progress 60; \
	rc=$$?; wait $$sim || { cat $(BUILD)/stress-progress.log; echo "FAILED: simulated interleavings"; rc=1; }; \
	grep -h "interleavings passed" $(BUILD)/stress-progress.log; exit $$rc

# The include graph: no cycle between folders, includes point down the layers, no
# runtime part includes another (tests/lint/layers.py).
layers:
	$(Q)/usr/bin/python3 tests/lint/layers.py

test: layers unit fuzz-replay integration stress-slice

sanitize:
	$(Q)$(MAKE) --no-print-directory SANITIZE=address,undefined CFLAGS="-O1 -g" test

# ThreadSanitizer over the code that runs on more than one thread, and only that: the
# rest of jackdaw is single-threaded, and ASan+UBSan already cover it.  The unit tests
# are those that start threads — the executor's reaper (test_exec, with
# test_exec_deadline for the deadline heap beside it), the tracer's thread
# (test_tracer), the collector beside a client loop (test_collector); the integration
# tests run TSan-built daemons through commands with process groups (t_52), time
# limits (t_53), sleeps (t_54), cancels (t_92) and traces sent to a collector (t_95).
# halt_on_error: a race fails the test binary, or the daemon, whose log lib.sh reads.
TSAN_UNIT        := test_exec test_exec_deadline test_tracer test_collector
TSAN_INTEGRATION := t_52 t_53 t_54 t_92 t_95
TSAN_OPTIONS_SET := halt_on_error=1 second_deadlock_stack=1

check-tsan: deps
	$(Q)$(MAKE) --no-print-directory SANITIZE=thread CFLAGS="-O1 -g" tsan-tests

# gcc 12's TSan aborts at start ("unexpected memory mapping") on kernels that randomize
# mmap with more bits than it knows (vm.mmap_rnd_bits > 28); without address space
# randomization, which children inherit, it runs, so the tests then run under
# `setarch -R`.
tsan-tests: $(TSAN_UNIT:%=$(BUILD)/tests/%) $(BUILD)/jackdaw
	$(Q)test "$(SANITIZE)" = thread || { echo "tsan-tests: run it as 'make check-tsan'"; exit 2; }
	$(Q)export TSAN_OPTIONS="$(TSAN_OPTIONS_SET)$${TSAN_OPTIONS:+ $$TSAN_OPTIONS}"; norand=; \
	if ! $(BUILD)/tests/test_exec_deadline >$(BUILD)/tsan-probe.log 2>&1 && \
	    grep -q 'unexpected memory mapping' $(BUILD)/tsan-probe.log; then \
	    norand="setarch $$(uname -m) -R"; echo "check-tsan: this kernel needs $$norand"; fi; \
	for t in $(TSAN_UNIT:%=$(BUILD)/tests/%); do \
	    echo "== $$t (tsan)"; $$norand $$t >$$t.log 2>&1 || { cat $$t.log; echo "FAILED: $$t"; exit 1; }; \
	    grep -h 'PASSED' $$t.log; done; \
	JACKDAW=$(abspath $(BUILD)/jackdaw) $$norand ./tests/integration/run-all.sh $(TSAN_INTEGRATION)

check: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(MAKE) --no-print-directory test
	$(Q)$(MAKE) --no-print-directory sanitize
	$(Q)$(MAKE) --no-print-directory check-tsan

bench: all
	$(Q)./tools/bench/run-all.sh $(BUILD)

# Fuzz harnesses for the decoders of outside bytes (tests/fuzz/README.md).  `make fuzz`
# builds them with clang and libFuzzer into build/fuzz/ (not part of check); each runs
# as `build/fuzz/fuzz_X -max_total_time=60 SCRATCH_DIR tests/fuzz/corpus/X`.
# `fuzz-replay`, part of `test` (so of check, and again under the sanitizers), builds
# them with $(CC) and tests/fuzz/replay.c instead and runs every corpus file once.
# fuzz_parts links the runtime's parts against the fake node (tests/unit/fake_node.c),
# never the node's centre (node*.c): the harnesses take from an archive only what they
# use, so a new part (its file in core/runtime, its entry in parts.c) is fuzzed without
# a change here.
# `fuzz-seeds` rewrites the corpora's seed files (tests/fuzz/seeds.c).
FUZZ_SRC   := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_NAMES := $(FUZZ_SRC:tests/fuzz/%.c=%)
FUZZ_LIB   := $(filter-out core/runtime/node%.c core/client/% core/net/conn%.c,$(filter core/%,$(LIB_SRC))) \
              core/client/agent_line.c \
              trace/format/block.c trace/format/blockread.c trace/format/event.c \
              trace/format/wire.c
FUZZ_CC    ?= clang
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -D_GNU_SOURCE -g -O1 -I. \
              $(PKG_CFLAGS) -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_REPLAY := $(FUZZ_NAMES:%=$(BUILD)/fuzz-replay/%)

build/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  FUZZCC $<"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

build/fuzz/libfuzzlib.a: $(FUZZ_LIB:%.c=build/fuzz/obj/%.o)
	$(Q)rm -f $@ && ar rcs $@ $^

build/fuzz/fuzz_parts: build/fuzz/obj/tests/fuzz/fuzz_parts.o build/fuzz/obj/tests/unit/fake_node.o \
                       build/fuzz/libfuzzlib.a
	@echo "  FUZZ  $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

build/fuzz/fuzz_%: build/fuzz/obj/tests/fuzz/fuzz_%.o build/fuzz/libfuzzlib.a
	@echo "  FUZZ  $@"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz: $(FUZZ_NAMES:%=build/fuzz/%)

# Kept, so that a second `make fuzz` relinks nothing.
.SECONDARY: $(FUZZ_NAMES:%=build/fuzz/obj/tests/fuzz/%.o)

$(BUILD)/fuzz-replay/fuzz_parts: tests/fuzz/fuzz_parts.c tests/fuzz/replay.c tests/fuzz/fuzz.h \
                                 tests/unit/fake_node.c tests/unit/fake_node.h $(BUILD)/libjackdaw.a
	@mkdir -p $(dir $@)
	@echo "  TEST  $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/replay.c tests/unit/fake_node.c \
	    $(BUILD)/libjackdaw.a $(LDLIBS)

$(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/libjackdaw.a
	@mkdir -p $(dir $@)
	@echo "  TEST  $@"
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< tests/fuzz/replay.c $(BUILD)/libjackdaw.a $(LDLIBS)

# The corpus of fuzz_NAME is tests/fuzz/corpus/NAME; the trace scanner's is the trace
# corpus of the trace tools' tests.
fuzz-replay: $(FUZZ_REPLAY)
	$(Q)for n in $(FUZZ_NAMES); do \
	    case $$n in fuzz_trace) dir=tests/traces;; *) dir=tests/fuzz/corpus/$${n#fuzz_};; esac; \
	    FUZZ_LOG=debug $(BUILD)/fuzz-replay/$$n $$dir 2>$(BUILD)/fuzz-replay/$$n.log || { \
	        tail -n 30 $(BUILD)/fuzz-replay/$$n.log; \
	        echo "FAILED: fuzz replay of $$n (the last file named above)"; exit 1; }; done

$(BUILD)/fuzz-seeds: tests/fuzz/seeds.c tests/fuzz/fuzz.h $(BUILD)/libjackdaw.a
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/libjackdaw.a $(LDLIBS)

fuzz-seeds: $(BUILD)/fuzz-seeds
	$(Q)$(BUILD)/fuzz-seeds tests/fuzz/corpus

install: $(BUILD)/jackdaw
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	           $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/jackdaw
	install -m 0755 $(BUILD)/jackdaw $(DESTDIR)$(PREFIX)/bin/jackdaw
	install -m 0644 share/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 0644 share/man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	cp -R share/. $(DESTDIR)$(PREFIX)/share/jackdaw/
	rm -rf $(DESTDIR)$(PREFIX)/share/jackdaw/man

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj build/fuzz/obj -name '*.d' 2>/dev/null)
