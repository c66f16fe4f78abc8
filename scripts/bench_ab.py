"""Side-by-side benchmark of two installs of deepgemm_ascend (e.g. before and after a change): runs
`deepgemm-ascend bench` from each in turn, alternating for --rounds rounds so that machine drift hits
both alike, and prints per case the median ratio to torch of each and their quotient.

  python scripts/bench_ab.py --before /tmp/before_pkg [--after DIR] [--rounds 3] -- <bench arguments>

--before / --after are directories put first on PYTHONPATH (pip install --target DIR); no --after means
the installed package."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run_once(path, bench_args):
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([sys.executable, "-m", "deepgemm_ascend", "bench", "--no-progress", "--json", out.name,
                        *bench_args], env=env, check=True, stdout=subprocess.DEVNULL)
        with open(out.name) as f:
            return json.load(f)


def key(row):
    return (row["kernel"], row.get("layout", ""), row["m"], row["n"], row["k"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default="")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("bench_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    bench_args = [a for a in args.bench_args if a != "--"]
    times = {"before": {}, "after": {}}
    ratios = {"before": {}, "after": {}}
    for _ in range(args.rounds):
        for side, path in (("before", args.before), ("after", args.after)):
            for row in run_once(path, bench_args)["results"]:
                times[side].setdefault(key(row), []).append(row["ours_min_ms"])
                ratios[side].setdefault(key(row), []).append(row["torch_min_ms"] / row["ours_min_ms"])
    print(f"{'case':34s} {'before ms':>10s} {'after ms':>10s} {'speed a/b':>10s} {'ratio b':>8s} {'ratio a':>8s}"
          f" {'ratio a/b':>10s}")
    speed, rel = [], []
    for k in times["before"]:
        tb, ta = statistics.median(times["before"][k]), statistics.median(times["after"][k])
        rb, ra = statistics.median(ratios["before"][k]), statistics.median(ratios["after"][k])
        speed.append(tb / ta)
        rel.append(ra / rb)
        print(f"{' '.join(map(str, k)):34s} {tb:10.3f} {ta:10.3f} {tb / ta:10.3f} {rb:8.3f} {ra:8.3f} {ra / rb:10.3f}")
    print(f"geometric mean: speed after/before {statistics.geometric_mean(speed):.3f}, ratio to torch after/before "
          f"{statistics.geometric_mean(rel):.3f} ({args.rounds} alternating rounds of each)")


if __name__ == "__main__":
    main()
