#!/usr/bin/env bash
# Planted errors in the model's rules that CATLASS's mix examples rely on: each mutation below is made in a copy
# of one model source (cpp/kernels/model), which is compiled with the build's own command and linked with the
# build's other objects into a copy of libdga_npu_model.so; a CATLASS example run on that copy
# (scripts/npu_run.py --lib) must fail, while scripts/check_catlass.sh shows it passes on the real library.
#   usage: check_catlass_planted.sh [build dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
catlass=${DGA_CATLASS:-$root/../shared/third_party/catlass}
model="$root/cpp/kernels/model"
cmds=$(ninja -C "$build" -t commands dga_npu_model)
link=$(grep -E -- "-o libdga_npu_model.so( |$)" <<< "$cmds")
[ -n "$link" ] || { echo "check_catlass_planted: no model library in $build" >&2; exit 1; }
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# name | model source | sed expression | example directory | program arguments
mutations=(
  # a mode-4 CrossCoreWaitFlag that neither waits nor takes its count (the AIVs read their UB before the AIC's
  # Fixpipe wrote it; the counts pile up)
  "mode-4 wait ignored|model_group.cpp|/Group& g = group(\"CrossCoreWaitFlag (mode 4)\");/i return;|46_ascend950_matmul_fixpipe_opti|200 130 300 0"
  # a mode-4 wait that no longer orders the waiting pipe after the setter (the access checker must see the
  # AIV's MTE3 read of the AIC's Fixpipe output unordered)
  "mode-4 wait orders nothing|model_group.cpp|/^void intra_wait/,/^}/s/aiv_wait_order(c, pipe, q.front());/(void)0;/|46_ascend950_matmul_fixpipe_opti|200 130 300 0"
  # the Fixpipe to UB's unitFlag dropped (its L0C read no longer waits for the Mmad's)
  "Fixpipe to UB unit flag ignored|model_group.cpp|s/  }, unit_flag);/  }, 0);/|46_ascend950_matmul_fixpipe_opti|200 130 300 0"
)

failed=0
for m in "${mutations[@]}"; do
  IFS='|' read -r name file expr example args <<< "$m"
  dir="$work/$(tr -c "A-Za-z0-9\n" _ <<< "$name")"; mkdir -p "$dir"
  cp "$model/$file" "$dir/$file"
  sed -i "$expr" "$dir/$file"
  if cmp -s "$dir/$file" "$model/$file"; then echo "FAIL  '$name' changed nothing"; failed=1; continue; fi
  c=$(grep -F -- "-c $model/$file" <<< "$cmds" | head -1)
  o=$(grep -oE -- "-o [^ ]+\.o" <<< "$c" | cut -c4-)
  c=$(sed -E "s# -MD -MT [^ ]+ -MF [^ ]+##" <<< "$c")
  c=${c//-c $model\/$file/-c $dir/$file}; c=${c//-o $o/-o $dir/mutated.o}
  l=${link//$o/$dir/mutated.o}; l=${l/-o libdga_npu_model.so/-o $dir/libdga_npu_model.so}
  if ! (cd "$build" && eval "$c" && eval "$l") > "$dir/build.log" 2>&1; then
    echo "FAIL  '$name' does not build"; tail -5 "$dir/build.log"; failed=1; continue
  fi
  ln -s "$build/npu_model_stub" "$dir/npu_model_stub"
  for so in "$build"/libdeepgemm_ascend.so*; do ln -s "$so" "$dir/"; done
  if python "$root/scripts/npu_run.py" "$catlass/examples/$example" --build "$build" --lib "$dir" -- $args \
      > "$dir/run.log" 2>&1; then
    echo "FAIL  '$name' was not caught by $example $args"; failed=1
  else
    why=$(grep -m1 -E "failed on the instruction model|ompare failed|Error count|FAIL" "$dir/run.log" | cut -c1-240)
    echo "ok    '$name' fails $example: $why"
  fi
done
exit $failed
