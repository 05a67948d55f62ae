# Entry points. `make demo` and `make test` set everything up by themselves.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo

.PHONY: setup build test unit-test interop-test demo bench clean

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: setup $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j 2

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j 2

interop-test: build
	SKADE_BIN=$(abspath $(BUILD_DIR))/bin/skade .venv/bin/python -m pytest -q tests/interop

test: unit-test interop-test

demo: build
	$(BUILD_DIR)/bin/skade --warehouse demo-warehouse demo

bench: build
	scripts/bench.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR)
