"""Kernels by total GPU time from an ncu CSV (--metrics gpu__time_duration.sum --csv --page raw),
as scripts/gpu_check.sh --profile prints them: the profiled window's total, then each kernel name
(shortened) with its launches, total milliseconds and share.

    python3 bench/ncu_summary.py ncu.csv"""
import csv
import sys
from collections import defaultdict


def main(path):
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own messages are unquoted
    total, calls = defaultdict(float), defaultdict(int)
    scale = {"nsecond": 1e-6, "usecond": 1e-3, "msecond": 1.0, "second": 1e3}
    unit = 1e-6
    for row in csv.DictReader(lines):
        value = row.get("gpu__time_duration.sum", "")
        if value in scale:  # the units row
            unit = scale[value]
            continue
        try:
            ms = float(value.replace(",", "")) * unit
        except ValueError:
            continue
        name = row.get("Kernel Name", "?")
        name = name.split("(")[0][:90]
        total[name] += ms
        calls[name] += 1
    whole = sum(total.values())
    print(f"{sum(calls.values())} kernels, {whole:.1f} ms of GPU time")
    for name, ms in sorted(total.items(), key=lambda kv: -kv[1])[:22]:
        print(f"{ms:9.3f} ms {100 * ms / whole if whole else 0:5.1f}% {calls[name]:5d}x  {name}")


if __name__ == "__main__":
    main(sys.argv[1])
