"""Import benchmark: prints figures, asserts nothing.

Task files of 1,000 and 10,000 rows, text only and with two media inputs per row (first and last
frame, PNG files on disk), read and validated by the real importer. The baseline is the text-only
file of the same length in the same run; 10k/1k shows the work per row stays flat (no quadratic
step). Two layouts of inputs: every row naming the same two frames (one sniff and hash per file),
and every row its own two frames (one sniff and hash per row).

    python -m bench.bench_import [--repeat 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mediaassist.core.config import AppConfig, parse_config
from mediaassist.core.importer import read_task_file
from tests.media_helpers import write_png


def _config() -> AppConfig:
    return parse_config({
        "providers": [{"name": "sim", "kind": "poll", "type": "simulated"}],
        "models": [{"name": "i2v", "kind": "poll", "provider": "sim", "inputs": ["first_frame", "last_frame"]},
                   {"name": "video", "kind": "poll", "provider": "sim"}],
    })


def _files(root: Path, rows: int) -> dict[str, Path]:
    shared = [write_png(root / "shared" / "a.png"), write_png(root / "shared" / "b.png", shade=1)]
    for i in range(rows):
        write_png(root / "own" / f"{i}-a.png", shade=i)
        write_png(root / "own" / f"{i}-b.png", shade=i + 1)
    layouts = {
        "text only": ("model,prompt\n", lambda i: f"video,clip {i}\n"),
        "same 2 frames": ("model,prompt,first_frame,last_frame\n",
                          lambda i: f"i2v,clip {i},{shared[0]},{shared[1]}\n"),
        "own 2 frames": ("model,prompt,first_frame,last_frame\n",
                         lambda i: f"i2v,clip {i},own/{i}-a.png,own/{i}-b.png\n"),
    }
    paths = {}
    for name, (header, row) in layouts.items():
        path = root / f"{name.replace(' ', '-')}.csv"
        path.write_text(header + "".join(row(i) for i in range(rows)), encoding="utf-8")
        paths[name] = path
    return paths


def _best(path: Path, config: AppConfig, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        report = read_task_file(path, config)
        best = min(best, time.perf_counter() - start)
        assert not report.errors  # a benchmark of failing rows would measure the wrong thing
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    config = _config()
    results: dict[tuple[int, str], float] = {}
    for rows in (1_000, 10_000):
        with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
            for name, path in _files(Path(tmp), rows).items():
                results[rows, name] = _best(path, config, args.repeat)
    print(f"{'layout':<16}{'1k rows':>10}{'10k rows':>10}{'10k/1k':>8}{'vs text (10k)':>15}")
    for name in ("text only", "same 2 frames", "own 2 frames"):
        small, large = results[1_000, name], results[10_000, name]
        print(f"{name:<16}{small:>9.3f}s{large:>9.3f}s{large / small:>8.1f}"
              f"{large / results[10_000, 'text only']:>14.2f}x")


if __name__ == "__main__":
    main()
