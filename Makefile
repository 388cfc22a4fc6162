# rocehil's front door. Two commands on a fresh Debian 12 machine, as root:
#   make demo   install what is missing, build, and run the demo
#   make test   install what is missing, build, and run every test
# Everything else here is a step of those two, usable on its own.

PRESET      ?= default
BUILD       := build/$(PRESET)
ROCEHIL     := $(BUILD)/harness/rocehil
SYNTH       := $(BUILD)/bench/rocehil-synth-capture
DEMO_DIR    ?= out/demo
DEMO_ID     ?= demo
FUZZ_SECONDS ?= 20
CTEST_FLAGS := --output-on-failure --timeout 600

.PHONY: all deps configure build test test-unit test-system test-asan demo bench format clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET)

# Unit and system tests on the release build, then unit tests and a bounded fuzz run under
# ASan + UBSan (clang), as CI does.
test: build
	cd $(BUILD) && ctest $(CTEST_FLAGS) -L 'unit|system'
	$(MAKE) --no-print-directory test-asan

test-unit: build
	cd $(BUILD) && ctest $(CTEST_FLAGS) -L unit

test-system: build
	cd $(BUILD) && ctest $(CTEST_FLAGS) -L system

test-asan: deps
	cmake --preset asan -DROCEHIL_FUZZ_SECONDS=$(FUZZ_SECONDS)
	cmake --build --preset asan
	cd build/asan && ctest $(CTEST_FLAGS) -L 'unit|fuzz'

# The virtual fabric goes up, shows its status, carries a point-to-point test between two racks
# (the server side started over ssh) and comes down again; until the suites and
# the orchestrator land, the demo then analyses a synthetic mirror-port capture: an incast on one
# spine link, with ECN marks, the CNPs they cause and PFC pauses.
demo: build
	@mkdir -p $(DEMO_DIR)
	$(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed --id $(DEMO_ID) --quiet
	$(ROCEHIL) testbed up --dir $(DEMO_DIR)/testbed --id $(DEMO_ID)
	$(ROCEHIL) testbed status --dir $(DEMO_DIR)/testbed || { $(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed; exit 3; }
	@echo; echo "demo: 4 QPs of RDMA WRITE from h1 (rack 1) to h3 (rack 2), the server started over ssh:"
	ip netns exec rocehil-$(DEMO_ID)-h1 $(abspath $(ROCEHIL)) traffic client --server h3 \
	  --ssh-config $(DEMO_DIR)/testbed/ssh/config --remote-rocehil $(abspath $(ROCEHIL)) \
	  --server-address 198.18.2.11 --qps 4 --duration 2 \
	  || { $(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed; exit 3; }
	$(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed
	$(SYNTH) --out $(DEMO_DIR)/spine1-mirror.pcapng --format pcapng --frames 300000 --qps 256 \
	  --hosts 16 --snaplen 128 --ce-percent 3 --pfc-per-million 400 --loss-per-million 50 --seed 7
	$(ROCEHIL) analyze $(DEMO_DIR)/spine1-mirror.pcapng --top 8
	$(ROCEHIL) analyze $(DEMO_DIR)/spine1-mirror.pcapng --json > $(DEMO_DIR)/analysis.json
	@echo
	@echo "demo: capture $(DEMO_DIR)/spine1-mirror.pcapng, JSON report $(DEMO_DIR)/analysis.json"

bench: build
	BUILD=$(BUILD) bench/analyze/run
	$(BUILD)/bench/rocehil-bench-soft --seconds 2 --rounds 3

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf build out
