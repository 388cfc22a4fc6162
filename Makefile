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

# The virtual fabric goes up and shows its status; spine 1's mirror port is captured live while a
# point-to-point test runs between two racks (the server side started over ssh) and a PFC storm
# is injected on spine 1's link to leaf 1; then the fabric comes down. Until the suites and the
# orchestrator land, the demo ends by analysing a synthetic mirror capture at scale: an incast on
# one spine link, with ECN marks, the CNPs they cause and PFC pauses.
DEMO_RUN = ip netns exec rocehil-$(DEMO_ID)
DEMO_DOWN = { $(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed; exit 3; }
demo: build
	@mkdir -p $(DEMO_DIR)
	$(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed --id $(DEMO_ID) --quiet
	$(ROCEHIL) testbed up --dir $(DEMO_DIR)/testbed --id $(DEMO_ID)
	$(ROCEHIL) testbed status --dir $(DEMO_DIR)/testbed || $(DEMO_DOWN)
	@echo; echo "demo: preflight of the testbed's inventory over ssh (every host is soft only: no RNIC here):"
	$(ROCEHIL) inventory check $(DEMO_DIR)/testbed/inventory.yaml || $(DEMO_DOWN)
	@echo; echo "demo: capturing spine 1's mirror port; 4 QPs of RDMA WRITE from h1 (rack 1) to h3 (rack 2), the server started over ssh; then a PFC storm on spine 1 -> leaf 1:"
	$(DEMO_RUN)-cap $(abspath $(ROCEHIL)) capture --iface $(DEMO_ID)-m1 --filter roce \
	  --write $(DEMO_DIR)/spine1-live.pcapng --direction spine-to-leaf --link-gbps 100 --top 4 \
	  --no-progress > $(DEMO_DIR)/capture.txt & echo $$! > $(DEMO_DIR)/capture.pid; sleep 1
	$(DEMO_RUN)-h1 $(abspath $(ROCEHIL)) traffic client --server h3 \
	  --ssh-config $(DEMO_DIR)/testbed/ssh/config --remote-rocehil $(abspath $(ROCEHIL)) \
	  --server-address 198.18.2.11 --qps 4 --duration 2 || $(DEMO_DOWN)
	$(DEMO_RUN)-s1 $(abspath $(ROCEHIL)) inject pfc --iface $(DEMO_ID)-l1 --priority 3 \
	  --quanta 65535 --pps 10000 --duration 0.5 --xon-at-end --no-progress || $(DEMO_DOWN)
	sleep 0.5; kill -INT $$(cat $(DEMO_DIR)/capture.pid); while kill -0 $$(cat $(DEMO_DIR)/capture.pid) 2>/dev/null; do sleep 0.2; done
	@echo; echo "demo: what spine 1's mirror port saw:"; cat $(DEMO_DIR)/capture.txt
	$(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed
	@echo; echo "demo: a synthetic 300,000-frame mirror capture (an incast on one spine link), analysed:"
	$(SYNTH) --out $(DEMO_DIR)/spine1-mirror.pcapng --format pcapng --frames 300000 --qps 256 \
	  --hosts 16 --snaplen 128 --ce-percent 3 --pfc-per-million 400 --loss-per-million 50 --seed 7
	$(ROCEHIL) analyze $(DEMO_DIR)/spine1-mirror.pcapng --top 8
	$(ROCEHIL) analyze $(DEMO_DIR)/spine1-mirror.pcapng --json > $(DEMO_DIR)/analysis.json
	@echo
	@echo "demo: live capture $(DEMO_DIR)/spine1-live.pcapng (report $(DEMO_DIR)/capture.txt);"
	@echo "      synthetic capture $(DEMO_DIR)/spine1-mirror.pcapng, JSON report $(DEMO_DIR)/analysis.json"

bench: build
	BUILD=$(BUILD) bench/analyze/run
	$(BUILD)/bench/rocehil-bench-soft --seconds 2 --rounds 3

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf build out
