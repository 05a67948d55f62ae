#!/usr/bin/env bash
# Bifröst's out-of-process custom steps: Debian's clang and lld (C to wasm32), then the
# example WASM guests in examples/wasm/ built into .deps/wasm/ (rebuilt when a source or
# one of the guest headers changed). The wasmtime library comes with the wasmtime wheel (requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
missing=()
for p in clang lld; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing apt packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p .deps/wasm
for src in examples/wasm/*.c; do
  out=.deps/wasm/$(basename "${src%.c}").wasm
  stale=0
  for dep in "$src" examples/wasm/*.h; do [ "$dep" -nt "$out" ] && stale=1; done
  if [ ! -f "$out" ] || [ "$stale" = 1 ]; then
    echo "setup: building the WASM guest $out"
    clang --target=wasm32 -O2 -nostdlib -Wall -Wextra -Werror -Wl,--no-entry -o "$out" "$src"
  fi
done
