#!/usr/bin/env bash
# Builds l0_view_bench.cpp against a build of libdeepgemm_ascend and runs it
# (docs/performance/host_speed_issue18_avx512f.md, eighth part).
#   usage: scripts/l0_view/run.sh [build dir] [M ...]   (default build/release; M 64 128 256)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
shift || true
exe=$(mktemp -d)/l0_view_bench
g++ -O2 -std=c++20 "$root/scripts/l0_view/l0_view_bench.cpp" -I"$root/cpp/include" -o "$exe" \
  -L"$build" -ldeepgemm_ascend -Wl,-rpath,"$build"
"$exe" "$@"
