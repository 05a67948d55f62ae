# Entry points. `make demo` and `make test` set everything up by themselves.
BUILD_DIR ?= build
BUILD_TYPE ?= RelWithDebInfo

.PHONY: setup build test unit-test interop-test server-test rck-test spark-test bifrost-test web-test web-e2e demo bench clean

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

# skade serve against real clients: PyIceberg's RestCatalog, openlineage-python, SSE readers.
server-test: build
	SKADE_BIN=$(abspath $(BUILD_DIR))/bin/skade .venv/bin/python -m pytest -q tests/server

# Apache Iceberg's REST compatibility kit (catalog tests) against skade serve; one JVM.
rck-test: build
	SKADE_BIN=$(abspath $(BUILD_DIR))/bin/skade .venv/bin/python -m pytest -q tests/rck

# Real Spark (pyspark 3.5 + Iceberg's Spark runtime) through skade serve and Iceberg's JDBC
# catalog; one Spark session per module.
spark-test: build
	SKADE_BIN=$(abspath $(BUILD_DIR))/bin/skade .venv/bin/python -m pytest -q tests/spark

# Bifröst against real graph servers (valkey-server + FalkorDB) that the tests start.
bifrost-test: build
	SKADE_BIN=$(abspath $(BUILD_DIR))/bin/skade BIFROST_BIN=$(abspath $(BUILD_DIR))/bin/bifrost \
	  .venv/bin/python -m pytest -q tests/bifrost

# The web app (web/): lint, format check, typecheck and the view model's unit tests (setup builds the bundle).
web-test: setup
	cd web && npm test

# The system map in headless chromium (Debian's, driven by playwright-core) against a real skade serve.
web-e2e: build
	cd web && SKADE_BIN=$(abspath $(BUILD_DIR))/bin/skade npm run test:e2e

test: unit-test interop-test server-test rck-test spark-test bifrost-test web-test web-e2e

demo: build
	$(BUILD_DIR)/bin/skade --warehouse demo-warehouse demo
	scripts/bifrost_demo.sh $(BUILD_DIR) demo-warehouse
	scripts/serve_demo.sh $(BUILD_DIR) demo-warehouse

bench: build
	scripts/bench.sh $(BUILD_DIR)
	.venv/bin/python bench/bifrost_bench.py --build-dir $(BUILD_DIR)
	.venv/bin/python bench/bifrost_transform_bench.py --build-dir $(BUILD_DIR)
	.venv/bin/python bench/bifrost_spark_bench.py --build-dir $(BUILD_DIR)
	.venv/bin/python bench/server_bench.py --build-dir $(BUILD_DIR)
	.venv/bin/python bench/spark_bench.py --build-dir $(BUILD_DIR)
	cd web && SKADE_BIN=$(abspath $(BUILD_DIR))/bin/skade npm run bench

clean:
	rm -rf $(BUILD_DIR)
