# rocehil's front door. Two commands on a fresh Debian 12 machine, as root:
#   make demo   install what is missing, build, and run the demo
#   make test   install what is missing, build, and run every test
# Everything else here is a step of those two, usable on its own.

SHELL       := /bin/bash
PRESET      ?= default
BUILD       := build/$(PRESET)
ROCEHIL     := $(BUILD)/harness/rocehil
DEMO_DIR    ?= out/demo
DEMO_ID     ?= demo
FUZZ_SECONDS ?= 10
CTEST_FLAGS := --output-on-failure --timeout 600

.PHONY: all deps configure build build-demo build-asan test test-unit test-system test-asan demo bench package install uninstall format clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake --preset $(PRESET)

build: configure
	cmake --build --preset $(PRESET)

# Unit and system tests on the release build, then unit tests and a bounded fuzz run under
# ASan + UBSan (clang), as CI does. One after the other: the ASan build beside the system tests,
# even in the idle scheduling class, took enough CPU to starve the soft provider of a shaped
# bandwidth test into go-back-N collapse.
# A system test that fails runs once more, and fails CI only if it fails again: each brings up a
# fabric of processes on the same two cores it measures, where one descheduled at the wrong
# moment (a switch, a guest's NIC, a soft QP's peer) fails a check no real fabric would; in one
# CI four tests of sixty did so, each passing when run again. The log keeps both runs' output.
# Unit tests run once: they are deterministic.
SYSTEM_RETRY := --repeat until-pass:2
test: build
	cd $(BUILD) && ctest $(CTEST_FLAGS) -L unit
	cd $(BUILD) && ctest $(CTEST_FLAGS) $(SYSTEM_RETRY) -L system
	$(MAKE) --no-print-directory test-asan

test-unit: build
	cd $(BUILD) && ctest $(CTEST_FLAGS) -L unit

test-system: build
	cd $(BUILD) && ctest $(CTEST_FLAGS) $(SYSTEM_RETRY) -L system

# The release build's files under PREFIX (default /usr/local): the binary, the DPDK module,
# the suites, rocehil(1) where man looks (PREFIX/share/man/man1: 'man rocehil' then finds it)
# and the bash completion. For machines without the Debian package; uninstall removes exactly
# what install wrote (cmake's install_manifest.txt).
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

uninstall:
	@test -f $(BUILD)/install_manifest.txt || { echo "nothing installed from $(BUILD)"; exit 1; }
	xargs -d '\n' rm -f -- < $(BUILD)/install_manifest.txt

# The Debian packages from the release build's install rules (cmake/RocehilInstall.cmake, CPack's
# DEB generator): BUILD/rocehil_VERSION_amd64.deb and BUILD/rocehil-dpdk_VERSION_amd64.deb (the
# DPDK capture backend), their Depends computed by dpkg-shlibdeps.
package: build
	cd $(BUILD) && cpack
	@ls -l $(BUILD)/rocehil_*_amd64.deb $(BUILD)/rocehil-dpdk_*_amd64.deb

# Only what test-asan runs: the unit tests and the fuzzers (not the binary, the benches or the
# system tests' helpers, which the release build has built and run).
build-asan: deps
	cmake --preset asan -DROCEHIL_FUZZ_SECONDS=$(FUZZ_SECONDS)
	cmake --build --preset asan --target unit-and-fuzz-tests

# Two jobs: each fuzzer runs beside the unit tests, which still run one at a time (their
# RESOURCE_LOCK, cmake/RocehilHelpers.cmake).
test-asan: build-asan
	cd build/asan && ctest $(CTEST_FLAGS) -j2 -L 'unit|fuzz'

# The virtual fabric goes up (4 hosts in 2 racks, 2 spines, each spine's links mirrored to a
# capture host) and the smoke suite runs on it: point-to-point bw and lat, a ring allreduce over
# 1, 4 and 8 QPs per connection with the ECMP imbalance graded from both spines' mirror ports,
# alltoall, an incast that makes the fabric mark ECN so CNPs flow, and a PFC storm injected on a
# mirrored link that the suite expects the harness to catch. The fabric comes down and the
# verdict table is shown again with where the report is.
DEMO_REPORTS = $(DEMO_DIR)/reports
# The demo runs only the rocehil binary: it builds that alone, not the tests, benches and fuzzers.
build-demo: configure
	cmake --build --preset $(PRESET) --target rocehil

demo: build-demo
	@mkdir -p $(DEMO_DIR)
	$(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed --id $(DEMO_ID) --quiet
	$(ROCEHIL) testbed up --dir $(DEMO_DIR)/testbed --id $(DEMO_ID)
	@echo; echo "demo: rocehil run suites/smoke.yaml on the testbed's inventory (every host is soft only: no RNIC here):"
	@$(ROCEHIL) run suites/smoke.yaml --inventory $(DEMO_DIR)/testbed/inventory.yaml \
	  --reports $(DEMO_REPORTS) | tee $(DEMO_DIR)/run.txt; \
	  code=$${PIPESTATUS[0]}; \
	  $(ROCEHIL) testbed down --dir $(DEMO_DIR)/testbed --quiet; \
	  echo; echo "demo: the testbed is down. The verdicts (pfc_storm is meant to fail: it shows the harness catching the storm):"; \
	  sed -n '/^  case /,$$p' $(DEMO_DIR)/run.txt; \
	  exit $$code

bench: build
	BUILD=$(BUILD) bench/analyze/run
	$(BUILD)/bench/rocehil-bench-soft --seconds 2 --rounds 3

format:
	git ls-files '*.cpp' '*.hpp' | xargs clang-format -i

clean:
	rm -rf build out
