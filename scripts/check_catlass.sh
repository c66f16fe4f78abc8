#!/usr/bin/env bash
# Huawei's CATLASS examples for the Ascend 950 (../shared/third_party/catlass, unmodified) built with
# scripts/npu_run.py and run on the instruction model at small shapes from their command lines: each must
# pass its own golden check with the model's checkers silent.
# With --mutations, errors planted in the model itself (below) must make them fail instead.
#   usage: check_catlass.sh [--mutations] [build dir]   (default build/release: libdga_npu_model.so and
#   npu_model_stub/; --mutations needs the build's ninja files)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=runs; [ "${1:-}" = --mutations ] && { mode=mutations; shift; }
build=$(cd "${1:-$root/build/release}" && pwd)
catlass=${DGA_CATLASS:-$root/../shared/third_party/catlass}
[ -d "$catlass/examples" ] || { echo "check_catlass: no CATLASS at $catlass" >&2; exit 1; }
# example directory | its gen_data*.py arguments (none: it makes no input files) | program arguments (the
# README's forms at smaller shapes, with tails; device 0). Every target of a directory runs.
examples=(
  "43_ascend950_basic_matmul||256 512 1024 0"
  "43_ascend950_basic_matmul||200 130 300 0"
  "50_ascend950_basic_matmul_gemv||1 200 127 0"
  "50_ascend950_basic_matmul_gemv||1 16 20 0"
  "53_ascend950_fp8_mx_matmul|128 256 512 0 1|128 256 512 0"
  "53_ascend950_fp8_mx_matmul|100 130 96 0 1|100 130 96 0"
  "54_ascend950_fp4_mx_matmul|128 256 512 0 1|128 256 512 0"
  "54_ascend950_fp4_mx_matmul|64 96 96 0 1|64 96 96 0"
  "58_ascend950_fp8_mx_batch_matmul|2 100 130 96 0 1|2 100 130 96 0"
  "60_ascend950_grouped_matmul_slice_m||8 256 512 512 0"
  "67_ascend950_batched_matmul||2 100 130 70 0"
  "73_ascend950_matmul_full_loadA||130 520 200 0"
)
failed=0
[ "$mode" = runs ] && for e in "${examples[@]}"; do
  IFS='|' read -r dir gen args <<< "$e"
  opts=(--build "$build"); [ -n "$gen" ] && opts+=(--gen-args "$gen")
  log="$build/catlass_${dir}_${args// /_}.log"
  if python "$root/scripts/npu_run.py" "$catlass/examples/$dir" "${opts[@]}" -- $args > "$log" 2>&1; then
    echo "pass  $dir $args ($(grep -c ': PASS' "$log") target(s))"
  else
    echo "FAIL  $dir $args"; grep -v '^\[' "$log" | tail -5; failed=1
  fi
done

# --mutations: planted errors in the instruction model itself (a copy of libdeepgemm_ascend with one model
# source changed, found first through LD_LIBRARY_PATH: the programs' library path is a RUNPATH) must make a
# CATLASS example fail: its golden check or the model's checkers. Unmutated, the same runs pass above.
[ "$mode" = mutations ] || exit $failed
cmds=$(ninja -C "$build" -t commands deepgemm_ascend)
link=$(grep -E -- "-o libdeepgemm_ascend\.so\.[0-9.]+( |$)" <<< "$cmds")
work=$(mktemp -d); trap '[ -n "${DGA_KEEP:-}" ] || rm -rf "$work"' EXIT
# plant <name> <model source under cpp/src/npu_model> <sed expression> <example dir> <program args>
plant() {
  local name=$1 file=cpp/src/npu_model/$2 expr=$3 dir=$4 args=$5 d=$work/$1 obj c l
  mkdir -p "$d"; sed "$expr" "$root/$file" > "$d/src.cpp"
  if cmp -s "$root/$file" "$d/src.cpp"; then echo "FAIL  plant $name: the expression changed nothing"; failed=1; return; fi
  obj="CMakeFiles/deepgemm_ascend.dir/$file.o"
  c=$(grep -F -- "-o $obj -c" <<< "$cmds")
  c=$(sed -E "s# -MD -MT [^ ]+ -MF [^ ]+##" <<< "$c"); c=${c/-o $obj/-o $d/obj.o}; c=${c/-c $root\/$file/-c $d/src.cpp}
  l=${link/ $obj / $d/obj.o }; l=$(sed -E "s#-o libdeepgemm_ascend\.so\.[0-9.]+#-o $d/lib.so#" <<< "$l")
  if ! (cd "$build" && eval "$c" && eval "$l") > "$d/build.log" 2>&1; then
    echo "FAIL  plant $name: the mutated model does not build"; tail -5 "$d/build.log"; failed=1; return
  fi
  soname=$(readelf -d "$d/lib.so" | sed -nE 's/.*SONAME.*\[(.*)\]/\1/p'); mv "$d/lib.so" "$d/$soname"
  if LD_LIBRARY_PATH="$d" python "$root/scripts/npu_run.py" "$catlass/examples/$dir" --build "$build" -- $args \
       > "$d/run.log" 2>&1; then
    echo "FAIL  plant $name: $dir $args still passes"; failed=1
  else
    echo "caught plant $name: $dir $args fails ($(grep -m1 -E "Compare failed|failed on the instruction model" "$d/run.log" | cut -c1-160))"
  fi
}
plant unit-flag-ignored unit_flag.cpp 's/if (unit_flag == 0 || l0c_ == nullptr) return;/return;/' \
  43_ascend950_basic_matmul "256 512 1024 0"
plant transposing-load-keeps-blocks load2d.cpp 's/const size_t in = r \* c0 + c;/const size_t in = c * kFractalRows + r;/' \
  43_ascend950_basic_matmul "200 130 300 0"
exit $failed
