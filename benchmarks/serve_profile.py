"""Where serve's time goes under a GetItem loop: py-spy's samples of `serve --workers 1`.

One run starts a Bigtable emulator (127.0.0.1, stopped by PID), loads AWS's Movies export,
starts `serve --workers 1` (one process) and, once it answered 50 calls, attaches `py-spy
record` to it for `--seconds` while one boto3 client makes the operation's calls (those of
serve_overhead.py: GetItem of one movie by default). py-spy samples serve unmodified, 100
times a second, each thread while it holds the GIL: Python's own work, not a wait on the
network or gRPC's C poller. It prints the threads, then the functions holding the most
samples, inclusive (a function and what it called) and by self time, file names cut to
their package, so a change to serve's request path starts from data (benchmarks/README.md
keeps the summaries, before and after). py-spy is a measuring tool, not a dependency: give
its path (`uv pip install py-spy` into any environment). Run:

    uv run python benchmarks/serve_profile.py --py-spy PATH [--seconds 20] [--operation GetItem] [--tree CHECKOUT]
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "0")  # before gRPC's import: the loader forks (load/encoder.py)

from serve_overhead import BATCH, OPERATIONS, QUERY, calls  # noqa: E402
from serve_throughput import client, movies_stage, start_serve  # noqa: E402

from ddb2bigtable.bigtable import emulator  # noqa: E402

TOP = 30
_LINE = re.compile(r" \((?P<file>[^()]*?):\d+\)$")


def frame_name(frame: str) -> str:
    """`function (path/to/site-packages/pkg/mod.py:12)` as `function (pkg/mod.py)`: one name for
    every line of a function."""
    found = _LINE.search(frame)
    if not found:
        return frame
    path = found["file"].split("site-packages/")[-1]
    if "/ddb2bigtable/" in path:  # this project's, from whichever checkout
        path = "ddb2bigtable/" + path.split("/ddb2bigtable/", 1)[1]
    return f"{frame[:found.start()]} ({path})"


def summary(collapsed: str, top: int = TOP) -> str:
    """The functions holding the most samples, inclusive and self, from py-spy's raw
    (collapsed) output: one `frame;frame;...;frame count` line per distinct stack."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    threads: collections.Counter[str] = collections.Counter()
    total = 0
    for line in collapsed.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        frames = [frame_name(f) for f in stack.split(";")]
        n = int(count)
        total += n
        threads[frames[0]] += n
        for name in set(frames[1:]):
            inclusive[name] += n
        own[frames[-1]] += n
    lines = [f"{total:,} samples"]
    lines += ["by thread:"] + [f"  {n / total:6.1%}  {name}" for name, n in threads.most_common(5)]
    shared = [name for name, n in inclusive.items() if n == total]  # the process's base: in every sample
    for name in shared:
        del inclusive[name]
    lines += [f"inclusive (besides {len(shared)} frames in every sample):"]
    lines += [f"  {n / total:6.1%}  {name}" for name, n in inclusive.most_common(top)]
    lines += ["self:"] + [f"  {n / total:6.1%}  {name}" for name, n in own.most_common(top)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--py-spy", required=True, help="the py-spy executable")
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--operation", choices=OPERATIONS, default="GetItem")
    parser.add_argument("--output", type=Path, help="also keep py-spy's raw samples here")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="run serve from this checkout (another commit's code, the same environment)")
    args = parser.parse_args()
    bigtable, processes = emulator.start(), []
    try:
        with tempfile.TemporaryDirectory() as tmp, emulator.pointed_at(bigtable.address):
            root = Path(tmp)
            movies_stage(root)
            process, endpoint = start_serve(root, 1, args.tree)  # one worker: serve's own process
            processes.append(process)
            boto = client(endpoint)
            keys = [{"year": i["year"], "title": i["title"]}
                    for i in boto.query(TableName="Movies", **{**QUERY, "Limit": BATCH})["Items"]]
            call = calls(boto, keys)[args.operation]
            for _ in range(50):
                call()  # connections made, first calls out of the way
            samples = root / "samples.txt"
            spy = subprocess.Popen([args.py_spy, "record", "--pid", str(process.pid), "--duration", str(args.seconds),
                                    "--rate", "100", "--gil", "--threads", "--format", "raw", "--output", str(samples)],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            made, began = 0, time.monotonic()
            while spy.poll() is None:
                call()
                made += 1
            took = time.monotonic() - began
            collapsed = samples.read_text()
            if args.output:
                args.output.write_text(collapsed)
            print(f"{made:,} {args.operation}s in {took:.0f} s ({made / took:.0f}/s), one client thread, "
                  f"load average {os.getloadavg()[0]:.1f}")
            print(summary(collapsed))
    finally:
        for process in processes:
            emulator.stop_process(process)
        bigtable.stop()


if __name__ == "__main__":
    main()
