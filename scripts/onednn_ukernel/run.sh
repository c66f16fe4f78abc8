#!/usr/bin/env bash
# Builds ukernel_vs_ours.cpp against a build of libdeepgemm_ascend and torch's libtorch_cpu, and runs it
# on the tile shapes of docs/performance/host_speed_issue18.md (issue 18, first part).
#   usage: scripts/onednn_ukernel/run.sh [build dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
torch_lib=$(python -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'lib'))")
exe=$(mktemp -d)/ukernel_vs_ours
g++ -O2 -std=c++20 "$root/scripts/onednn_ukernel/ukernel_vs_ours.cpp" -I"$root/cpp/include" -o "$exe" \
  -L"$build" -ldeepgemm_ascend -L"$torch_lib" -ltorch_cpu -lc10 -Wl,-rpath,"$build:$torch_lib"
for shape in "256 256 256" "128 128 512" "256 256 1024" "64 256 2048"; do "$exe" $shape; done
