"""Side-by-side timing of our GEMM calls only (no torch reference, which `scripts/bench_ab.py` runs and which
takes minutes per call where torch has no fast bf16 GEMM): two installs of deepgemm_ascend, or one install
with and without environment settings, run in alternating subprocesses; each times the call after two
warm-up calls and keeps its best; printed per shape is the best of all rounds of each side.

  python scripts/ab_ours.py --before DIR [--after DIR] [--after-env "K=V ..."] [--rounds 3] \\
      [--kernel bf16|fp8|fp8ue8m0|fp8mx|groupedmx] \\
      "128 7168 2048" "2048 7168 2048" ...

groupedmx: `m_grouped_fp8_gemm_nt_contiguous` with MX scales, M rows in 4 equal groups (each aligned).
DIR is a directory put first on PYTHONPATH (holding a deepgemm_ascend package); no --after means the
installed package; an empty --before with --after-env compares the installed package against itself."""
import argparse
import os
import subprocess
import sys

TIMER = r"""
import sys, time, torch, deepgemm_ascend as dg
m, n, k = map(int, sys.argv[1:4])
torch.manual_seed(0)
d = torch.empty(m, n, dtype=torch.bfloat16)
if sys.argv[4] == "bf16":
    a, b = torch.randn(m, k).bfloat16(), torch.randn(n, k).bfloat16()
    call = lambda: dg.bf16_gemm_nt(a, b, d)
elif sys.argv[4] == "fp8mx":  # MXFP8: (1, 1, 32), UE8M0 scales
    from deepgemm_ascend.utils import per_token_cast_to_fp8
    a = per_token_cast_to_fp8(torch.randn(m, k), use_ue8m0=True, gran_k=32)
    b = per_token_cast_to_fp8(torch.randn(n, k), use_ue8m0=True, gran_k=32)
    call = lambda: dg.fp8_gemm_nt(a, b, d, recipe=(1, 1, 32))
elif sys.argv[4] == "groupedmx":  # M-grouped contiguous MXFP8, 4 groups of M / 4 rows
    from deepgemm_ascend.utils import per_token_cast_to_fp8
    groups = 4
    a = per_token_cast_to_fp8(torch.randn(m, k), use_ue8m0=True, gran_k=32)
    qb, sb = zip(*[per_token_cast_to_fp8(torch.randn(n, k), use_ue8m0=True, gran_k=32) for _ in range(groups)])
    b = (torch.stack(qb), torch.stack(sb))
    ids = torch.arange(m, dtype=torch.int32) // (m // groups)
    call = lambda: dg.m_grouped_fp8_gemm_nt_contiguous(a, b, d, ids, recipe=(1, 1, 32))
else:  # fp8: (1, 128) / (128, 128); fp8ue8m0: the same with power-of-two scales
    from deepgemm_ascend.utils import per_block_cast_to_fp8, per_token_cast_to_fp8
    ue8m0 = sys.argv[4] == "fp8ue8m0"
    a = per_token_cast_to_fp8(torch.randn(m, k), use_ue8m0=ue8m0)
    b = per_block_cast_to_fp8(torch.randn(n, k), use_ue8m0=ue8m0)
    call = lambda: dg.fp8_gemm_nt(a, b, d)
call(); call()
times = []
for _ in range(max(2, min(30, int(3e10 / (2 * m * n * k))))):
    t = time.perf_counter(); call(); times.append(time.perf_counter() - t)
print(min(times))
"""


def run(pythonpath, extra_env, shape, kernel):
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-c", TIMER, *shape.split(), kernel], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout.split()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="")
    parser.add_argument("--after", default="")
    parser.add_argument("--after-env", default="", help="K=V settings for the after side only")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kernel", choices=["bf16", "fp8", "fp8ue8m0", "fp8mx", "groupedmx"], default="bf16")
    parser.add_argument("shapes", nargs="+", help='"M N K"')
    args = parser.parse_args()
    after_env = dict(kv.split("=", 1) for kv in args.after_env.split())
    for shape in args.shapes:
        before, after = [], []
        for _ in range(args.rounds):
            before.append(run(args.before, {}, shape, args.kernel))
            after.append(run(args.after, after_env, shape, args.kernel))
        m, n, k = map(int, shape.split())
        b, a = min(before), min(after)
        tf = lambda t: 2 * m * n * k / t / 1e12
        print(f"{args.kernel} {shape:>16}: before {b * 1e3:9.2f} ms ({tf(b):.3f} TFLOPS)  after {a * 1e3:9.2f} ms "
              f"({tf(a):.3f} TFLOPS)  speed after/before {b / a:.3f}", flush=True)


if __name__ == "__main__":
    main()
