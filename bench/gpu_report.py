"""The table scripts/gpu_check.sh prints last: kerascpp against PyTorch on the GPU, from the JSON
lines of kerascpp_bench and peers/torch_bench.py (one run of each workload).

    python3 bench/gpu_report.py bench.jsonl"""
import json
import sys


def main(path):
    train, predict = {}, {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            r = json.loads(line)
            if r.get("workload") == "predict1":
                if r.get("api") in ("predict_on_batch", "module(x) eager"):
                    predict[r["framework"]] = r
            else:
                train.setdefault(r["workload"], {})[r["framework"]] = r
    print(f"{'workload (GPU, float32)':<24} {'kerascpp':>12} {'pytorch':>12} {'x PyTorch':>10}  spread (max/min windows)")
    for w, fr in train.items():
        k, p = fr.get("kerascpp"), fr.get("pytorch")
        ks = k["samples_per_s"] if k else float("nan")
        ps = p["samples_per_s"] if p else float("nan")
        spread = " / ".join(f"{max(r['windows']) / min(r['windows']):.2f}" for r in (k, p) if r and min(r["windows"]) > 0)
        print(f"{w:<24} {ks:>12,.0f} {ps:>12,.0f} {ks / ps:>10.2f}  {spread}")
    if predict:
        k, p = predict.get("kerascpp"), predict.get("pytorch")
        kp = k["p50_ms"] if k else float("nan")
        pp = p["p50_ms"] if p else float("nan")
        print(f"{'predict batch 1 p50 ms':<24} {kp:>12.3f} {pp:>12.3f} {kp / pp:>10.2f}  (x PyTorch: lower is better)")


if __name__ == "__main__":
    main(sys.argv[1])
