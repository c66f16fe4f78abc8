#!/usr/bin/env bash
# Planted errors in the instruction model that CATLASS's examples must catch: each mutation below is made in a
# copy of one model source - the instruction semantics (cpp/npu_model/src) or the devkit-facing shim
# (cpp/npu_model/shim), both in libdga_npu_model -, which is compiled with the build's own command and linked
# with the build's other objects into a copy of that library; a CATLASS example run on that copy
# (scripts/npu_run.py --lib) must fail, while scripts/check_catlass.sh shows it passes on the real libraries.
#   usage: check_catlass_planted.sh [build dir]   (default build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
catlass=${DGA_CATLASS:-$root/../shared/third_party/catlass}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# name | model source | sed expression | example directory | program arguments
mutations=(
  # the L0C unit flags ignored: the Fixpipe's read of L0C is no longer ordered after the Mmad's write
  "unit flags ignored|cpp/npu_model/src/unit_flag.cpp|/^void UnitFlags::before/,/^}/s/if (unit_flag == 0 .*) return;/return;/|43_ascend950_basic_matmul|256 512 1024 0"
  # the transposing LoadData 2D keeping each square block untransposed (example 43's B is row-major)
  "transposing load keeps its blocks|cpp/npu_model/src/load2d.cpp|s/const size_t in = r \* c0 + c;/const size_t in = c * kFractalRows + r;/|43_ascend950_basic_matmul|200 130 300 0"
  # a mode-4 CrossCoreWaitFlag that neither waits nor takes its count (the AIVs read their UB before the AIC's
  # Fixpipe wrote it; the counts pile up)
  "mode-4 wait ignored|cpp/npu_model/shim/model_group.cpp|/Group& g = group(\"CrossCoreWaitFlag (mode 4)\");/i return;|46_ascend950_matmul_fixpipe_opti|200 130 300 0"
  # a mode-4 wait that no longer orders the waiting pipe after the setter (the access checker must see the
  # AIV's MTE3 read of the AIC's Fixpipe output unordered)
  "mode-4 wait orders nothing|cpp/npu_model/shim/model_group.cpp|/^void intra_wait/,/^}/s/aiv_wait_order(c, pipe, q.front());/(void)0;/|46_ascend950_matmul_fixpipe_opti|200 130 300 0"
  # a mode-0 barrier whose round completes at its first set, not once every AIV of the launch has set it
  # (example 68's AIVs meet at one after their AIC's partial tile)
  "mode-0 barrier counts at the first set|cpp/npu_model/src/group.cpp|/    if (!a\[size_t(id)\]) return {};/d|68_ascend950_multi_core_splitk_matmul|200 130 1000 0"
  # a wait that no longer sees the mode-0 counts (only modes 1 and 2)
  "wait ignores mode 0|cpp/npu_model/shim/model_group.cpp|/return g.flags.can_wait(c.sub, id) /s/all.flags->can_wait(all.core, id)/false/|68_ascend950_multi_core_splitk_matmul|200 130 1000 0"
  # the Fixpipe to UB's unitFlag dropped (its L0C read no longer waits for the Mmad's)
  "Fixpipe to UB unit flag ignored|cpp/npu_model/shim/model_group.cpp|s/  }, unit_flag, fixpipe_ub_cost(/  }, 0, fixpipe_ub_cost(/|46_ascend950_matmul_fixpipe_opti|200 130 300 0"
  # the integer Mmad reading its int8 operands as unsigned (example 51's operands are in [-5, 5])
  "int8 operands read unsigned|cpp/npu_model/src/cube.cpp|s/out\[i \* stride\] = int8_t(p\[first + i\]); return;/out[i * stride] = p[first + i]; return;/|51_ascend950_quant_matmul_per_group_per_block_tla|200 200 300 0"
)

# The library a model source is linked into: its ninja target and the file its link step writes.
declare -A target_of=([cpp/npu_model]=dga_npu_model)
failed=0
for m in "${mutations[@]}"; do
  IFS='|' read -r name file expr example args <<< "$m"
  dir="$work/$(tr -c "A-Za-z0-9\n" _ <<< "$name")"; mkdir -p "$dir"
  src="$root/$file"; copy="$dir/$(basename "$file")"
  sed "$expr" "$src" > "$copy"
  if cmp -s "$copy" "$src"; then echo "FAIL  '$name' changed nothing"; failed=1; continue; fi
  target=${target_of[$(cut -d/ -f1-2 <<< "$file")]}
  cmds=$(ninja -C "$build" -t commands "$target")
  link=$(grep -E -- "-o lib$target\.so[.0-9]*( |$)" <<< "$cmds")
  out=$(grep -oE -- "-o lib$target\.so[.0-9]*" <<< "$link" | cut -c4-)
  c=$(grep -F -- "-c $src" <<< "$cmds" | head -1)
  o=$(grep -oE -- "-o [^ ]+\.o" <<< "$c" | cut -c4-)
  c=$(sed -E "s# -MD -MT [^ ]+ -MF [^ ]+##" <<< "$c")
  # (the source's own directory stays on the include path, for its quoted includes)
  c=${c//-c $src/-I$(dirname "$src") -c $copy}; c=${c//-o $o/-o $dir/mutated.o}
  l=${link//$o/$dir/mutated.o}; l=${l/-o $out/-o $dir/$out}
  if ! (cd "$build" && eval "$c" && eval "$l") > "$dir/build.log" 2>&1; then
    echo "FAIL  '$name' does not build"; tail -5 "$dir/build.log"; failed=1; continue
  fi
  # The other library, the stub and the symlinks of the build beside the mutated library (npu_run.py --lib).
  ln -s "$build/npu_model_stub" "$dir/npu_model_stub"
  for so in "$build"/libdeepgemm_ascend.so* "$build"/libdga_npu_model.so; do
    [ -e "$dir/$(basename "$so")" ] || cp -P "$so" "$dir/" 2>/dev/null || ln -s "$so" "$dir/"
  done
  if python "$root/scripts/npu_run.py" "$catlass/examples/$example" --build "$build" --lib "$dir" -- $args \
      > "$dir/run.log" 2>&1; then
    echo "FAIL  '$name' was not caught by $example $args"; failed=1
  else
    why=$(grep -m1 -E "failed on the instruction model|ompare failed|Error count|FAIL" "$dir/run.log" | cut -c1-240)
    echo "ok    '$name' fails $example: $why"
  fi
done
exit $failed
