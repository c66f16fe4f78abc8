#!/usr/bin/env bash
# Builds b_path_bench.cpp against a build of libdeepgemm_ascend and runs it with the B matrix in DRAM and in
# L2, the GM -> L1 copy alone and with the L0B loads (docs/performance/host_speed_issue18_avx512f.md, seventh part).
#   usage: scripts/b_path/run.sh [build dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
exe=$(mktemp -d)/b_path_bench
g++ -O2 -std=c++20 "$root/scripts/b_path/b_path_bench.cpp" -I"$root/cpp/include" -o "$exe" \
  -L"$build" -ldeepgemm_ascend -Wl,-rpath,"$build"
for n in 16384 256; do for mode in copy full; do "$exe" "$mode" "$n"; done; done
