"""``python -m cinesub.sample OUT_DIR [--seed N] [--n-films N]``: write a sample world."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cinesub.sample.generate import generate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cinesub.sample", description=__doc__)
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--n-films", type=int, default=40)
    args = ap.parse_args(argv)
    manifest = generate(args.out_dir, seed=args.seed, n_films=args.n_films)
    print(json.dumps({"out_dir": str(args.out_dir), "films": len(manifest["films"]),
                      "candidates": len(manifest["candidates"]), "funnel": manifest["funnel"]}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
