"""How far cheaper encoders could take the Movies loader: loader / write path with the
encoder processes' work replayed from a recorded load (issue #33).

The loader's encoder processes do two things a fresh load waits for: the inference pass
(`exports.types.share_types`) and the encoding of every data file (`load.encoder._encode_file`).
This benchmark records what both sent in one real load, then measures, in one run and
against the write path as `load_throughput.py` measures it, loads where:

- `real`: nothing is replayed (the loader as it is);
- `types`: the inference pass answers at once with the recorded types;
- `rows`: each data file's recorded chunks are sent again instead of encoding it, after
  `--spin` microseconds of CPU per row (a stand-in for an encoder that costs that much);
- `both`: both replayed.

Everything else is the real load: the fork, the manifests, the client, the table's record
of types, the writer, the spot check. So `rows` with `--spin 0` is the ratio an encoder
that costs nothing would reach on this machine, and a spin between 0 and today's cost
says how cheap an encoder must be for a given ratio. Each mode's load is paired with a
write path run right after it (the modes' order reverses every round), and the medians
of those pairs' ratios are printed: on a shared machine, adjacent pairs see the same noise.

    uv run python benchmarks/loader_ceiling.py [--rounds 14] [--spin 0,6,12] [--modes real,types,rows,both]
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import load_throughput as lt  # noqa: E402  (sets sys.path and GRPC_ENABLE_FORK_SUPPORT before gRPC)

from ddb2bigtable.bigtable import emulator  # noqa: E402
from ddb2bigtable.load import encoder  # noqa: E402

_share_types, _encode_file = encoder.share_types, encoder._encode_file
# What the children do, set in this process before each load (they are forked from it).
_REPLAY: dict[str, Any] = {"types": False, "rows": False, "spin": 0.0, "folder": None, "shares": {}, "files": {}}


class _Tap:
    """The encoder's pipe, keeping a copy of every message sent."""

    def __init__(self, conn: Any) -> None:
        self.conn, self.sent = conn, list[Any]()

    def send(self, message: Any) -> None:
        self.sent.append(message)
        self.conn.send(message)


def _burn(micros: float) -> None:
    end = time.process_time() + micros / 1e6
    while time.process_time() < end:
        pass


def _shares(manifest: Any, files: Any, table: Any, keep: Any = None) -> Any:
    key = tuple(f.key for f in files)
    if _REPLAY["types"]:
        return _REPLAY["shares"][key]
    results = _share_types(manifest, files, table, keep)
    if _REPLAY["folder"] is not None:  # recording, in the child
        (_REPLAY["folder"] / f"types-{os.getpid()}").write_bytes(pickle.dumps((key, results)))
    return results


def _file(conn: Any, job: Any, codec: Any, f: Any, cells: Any, kept: Any = None) -> None:
    if _REPLAY["rows"]:
        for message in _REPLAY["files"][f.key]:
            _burn(len(message.lines) * _REPLAY["spin"])
            conn.send(message)
        return
    tap = _Tap(conn)
    _encode_file(tap, job, codec, f, cells, kept)
    if _REPLAY["folder"] is not None:
        (_REPLAY["folder"] / f"rows-{f.key.rsplit('/', 1)[-1]}").write_bytes(pickle.dumps((f.key, tap.sent)))


def _record(data: lt.DataSet, work: Path, folder: Path) -> None:
    _REPLAY["folder"] = folder
    lt.run_loader(data, work)
    _REPLAY["folder"] = None
    for path in folder.iterdir():
        key, value = pickle.loads(path.read_bytes())
        _REPLAY["shares" if path.name.startswith("types-") else "files"][key] = value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=14)
    parser.add_argument("--spin", default="0", help="CPU microseconds per row of a replayed encoder, comma-separated")
    parser.add_argument("--modes", default="real,types,rows,both")
    args = parser.parse_args()
    encoder.share_types, encoder._encode_file = _shares, _file
    modes = [(m, 0.0) for m in args.modes.split(",") if m in ("real", "types")]
    modes += [(m, float(s)) for m in args.modes.split(",") if m in ("rows", "both") for s in args.spin.split(",")]
    ratios: dict[tuple[str, float], list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp, emulator.start() as emu:
        os.environ[emulator.EMULATOR_ENV] = emu.address
        work, recorded = Path(tmp) / "work", Path(tmp) / "recorded"
        recorded.mkdir()
        data = lt.DataSet("Movies", lt.ROOT / "specs" / "movies.yaml", "movies", str(lt.ROOT / "exports" / "movies"))
        _record(data, work, recorded)
        lt.run_baseline(data, "write path")  # the first push opens the emulator's paths for both
        for i in range(args.rounds):
            for mode, spin in modes if i % 2 else modes[::-1]:
                _REPLAY.update(types=mode in ("types", "both"), rows=mode in ("rows", "both"), spin=spin)
                loader = lt.run_loader(data, work)
                ratios[(mode, spin)].append(loader / lt.run_baseline(data, "write path"))
    print(f"Movies loader / write path, {args.rounds} adjacent pairs per mode: median (best)")
    for (mode, spin), values in ratios.items():
        label = f"{mode} (spin {spin:g} us a row)" if mode in ("rows", "both") else mode
        print(f"  {label:32s} {statistics.median(values):.3f} ({max(values):.3f})")


if __name__ == "__main__":
    main()
