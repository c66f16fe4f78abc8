#!/usr/bin/env bash
# Huawei's CATLASS examples for the Ascend 950 (../shared/third_party/catlass, unmodified) built with
# scripts/npu_run.py and run on the instruction model at small shapes from their command lines: each must
# pass its own golden check with the model's checkers silent.
#   usage: check_catlass.sh [build dir]   (default build/release: libdga_npu_model.so and npu_model_stub/)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build/release}" && pwd)
catlass=${DGA_CATLASS:-$root/../shared/third_party/catlass}
[ -d "$catlass/examples" ] || { echo "check_catlass: no CATLASS at $catlass" >&2; exit 1; }
# example directory | its gen_data*.py arguments (none: it makes no input files) | program arguments (the
# README's forms at smaller shapes, with tails; device 0; none when the generator runs the program) [| the targets to run, by name suffix; default: every
# target of the directory].
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
  # mix (cube + two vector cores, mode-4 flags, Fixpipe into both UBs): fp32 tiles of at most 256 x 248, so
  # that each vector core's half stays inside its 124 KiB UB stage (a 256 x 256 tile's half is 128 KiB)
  "46_ascend950_matmul_fixpipe_opti||200 130 300 0"
  "46_ascend950_matmul_fixpipe_opti||300 120 100 0"
  # mix, stream-K and split-K: the AIVs of every group meet at a mode-0 cross-core barrier (the launch's
  # groups run together), then reduce the partial tiles
  "66_ascend950_streamk_matmul||200 130 1000 0"
  "68_ascend950_multi_core_splitk_matmul||200 130 1000 0"
  "69_ascend950_tail_multi_core_splitk_matmul||200 130 1000 0"
  # its generator runs the program itself (from CATLASS's output/bin) and compares: gen_data arguments only
  # (M divisible by the group count: the generator splits it evenly)
  "55_ascend950_mx_grouped_matmul_slice_m|2 128 256 512 0 float8_e5m2 0|"
  "55_ascend950_mx_grouped_matmul_slice_m|2 100 130 96 0 float8_e4m3fn 0|"
  "55_ascend950_mx_grouped_matmul_slice_m|3 69 130 128 1 float4_e2m1fn_x2 0|"
  # mix, an epilogue visitor graph on the vector cores (leaky_relu reaches vlrelu and bias the UB -> UB
  # DataCopy, neither modelled)
  "64_ascend950_matmul_evg||100 130 72 0|add add_ub sigmoid silu tanh"
  # mix, int8 x int8 -> int32 Mmad, the int32 L0C to both UBs, a per-group / per-block dequant epilogue (s32 ->
  # f32 casts, broadcast loads, f32 -> f16): N tiles above 64 (an N tile of at most 64 takes the level-0 Cast
  # with MoveMask / ppack, not modelled)
  "51_ascend950_quant_matmul_per_group_per_block_tla||200 200 300 0"
  "51_ascend950_quant_matmul_per_group_per_block_tla||300 330 520 0"
)
# An entry's name in messages and log files: its program arguments, or its generator's when it has none.
entry_tag() { if [ -n "$2" ]; then echo "$2"; else echo "gen $1"; fi; }

# One entry: builds and runs it, prints its pass / FAIL line (and a FAIL's last lines).
run_entry() {
  local dir gen args only tag log ok t
  local -a opts
  IFS='|' read -r dir gen args only <<< "$1"
  opts=(--build "$build"); [ -n "$gen" ] && opts+=(--gen-args "$gen")
  tag=$(entry_tag "$gen" "$args"); log="$build/catlass_${dir}_${tag// /_}.log"
  ok=1; : > "$log"
  if [ -z "$only" ]; then
    python "$root/scripts/npu_run.py" "$catlass/examples/$dir" "${opts[@]}" -- $args >> "$log" 2>&1 || ok=0
  else
    for t in $only; do
      python "$root/scripts/npu_run.py" "$catlass/examples/$dir" "${opts[@]}" --target "${dir}_$t" -- $args \
        >> "$log" 2>&1 || ok=0
    done
    [ "$(grep -c ': PASS' "$log")" = "$(wc -w <<< "$only")" ] || ok=0  # (a misspelt target builds nothing)
  fi
  if [ $ok = 1 ]; then
    echo "pass  $dir $tag ($(grep -c ': PASS' "$log") target(s))"
  else
    echo "FAIL  $dir $tag"; grep -v '^\[' "$log" | tail -5
  fi
}

# The examples' directories run in parallel, DGA_CATLASS_JOBS (default 2) at a time (building a program is
# one compiler process); the entries of one directory one after the other (they share its build), and the
# results print in the list's order.
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
dirs=()
for e in "${examples[@]}"; do
  d=${e%%|*}; [[ " ${dirs[*]} " == *" $d "* ]] || dirs+=("$d")
done
for i in "${!dirs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "${DGA_CATLASS_JOBS:-2}" ]; do wait -n || true; done
  ( for e in "${examples[@]}"; do if [ "${e%%|*}" = "${dirs[$i]}" ]; then run_entry "$e"; fi; done > "$out/$i" 2>&1 ) &
done
wait
failed=0
for i in "${!dirs[@]}"; do
  cat "$out/$i"
  if grep -q '^FAIL' "$out/$i"; then failed=1; fi
done

# Which modelled instructions the examples reached, and which examples reached each (npu_run.py's lines).
echo "modelled instructions the examples reached:"
for e in "${examples[@]}"; do
  IFS='|' read -r dir gen args only <<< "$e"; tag=$(entry_tag "$gen" "$args")
  sed -n "s/^npu_run: [^ ]*: instructions reached: //p" "$build/catlass_${dir}_${tag// /_}.log" | tr ' ' '\n' |
    sed "s/\$/ ${dir%%_*}/"
done | sort -u | awk '{ex[$1] = ex[$1] (ex[$1] == "" ? "" : ",") $2} END {for (i in ex) print "  " i ": " ex[i]}' | sort
exit $failed
