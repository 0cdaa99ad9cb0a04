"""The property test of serve over botocore's model, for as long as it is given.

tests/serve/protocol/test_model_requests.py drives every operation serve answers with
requests generated from botocore's model of DynamoDB, valid and mutated, and asserts no
5xx and no partial write; CI runs 120 examples per operation. This runs the same test
with fresh random examples for `--minutes` in all (each operation its share), on the
test session's own emulator and stage, and prints how many requests were sent; it exits
non-zero with hypothesis's smallest failing request if one gets a 5xx. Run:

    uv run python benchmarks/serve_fuzz.py [--minutes 30]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    args = parser.parse_args()
    test = "tests/serve/protocol/test_model_requests.py::test_no_request_from_the_model_gets_a_5xx_or_a_partial_write"
    sys.exit(subprocess.call([sys.executable, "-m", "pytest", test, "-q", "-s", "-p", "no:cacheprovider"], cwd=ROOT,
                             env={**os.environ, "DDB2BIGTABLE_FUZZ_MINUTES": str(args.minutes)}))


if __name__ == "__main__":
    main()
