"""bench/report.py's pooling of the interleaved rounds run.sh measures a workload in: each
framework's rounds become one record (windows and paired ratios concatenated, their medians
recomputed), and a new round 1 starts a new measurement (RERUN=1 appends to the last run)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


def line(rnd, fw="kerascpp", workload="mlp_b128", **kw):
    return {"round": rnd, "framework": fw, "workload": workload, **kw}


def test_rounds_pool_into_one_record_per_framework():
    recs = report.pool_rounds([
        line(1, windows=[10.0, 30.0], samples_per_s=20.0, gflops=2.0, peak_rss_mb=80.0,
             paired_fractions=[0.5, 0.7], paired_fraction=0.6, time_to_first_step_s=0.4),
        line(1, fw="tensorflow", windows=[5.0], samples_per_s=5.0),
        line(2, windows=[40.0], samples_per_s=40.0, gflops=4.0, peak_rss_mb=90.0,
             paired_fractions=[0.9], paired_fraction=0.9, time_to_first_step_s=0.5),
        line(2, fw="tensorflow", windows=[7.0], samples_per_s=7.0),
    ])
    assert len(recs) == 2
    k = recs[0]
    assert k["rounds"] == 2
    assert k["windows"] == [10.0, 30.0, 40.0]
    assert k["samples_per_s"] == 30.0  # the median of all three windows
    assert k["round_windows"] == [[10.0, 30.0], [40.0]]
    assert k["paired_fractions"] == [0.5, 0.7, 0.9] and k["paired_fraction"] == 0.7
    assert k["gflops"] == 3.0  # scaled with samples/s: 2.0 GFLOP/s at 20 samples/s
    assert k["peak_rss_mb"] == 90.0  # the highest round
    assert k["time_to_first_step_s"] == 0.4  # the first round's
    assert recs[1]["framework"] == "tensorflow" and recs[1]["samples_per_s"] == 6.0


def test_a_new_round_one_starts_a_new_measurement_and_the_latest_wins():
    recs = report.pool_rounds([
        line(1, windows=[1.0], samples_per_s=1.0),
        line(2, windows=[3.0], samples_per_s=3.0),
        {"framework": "env", "workload": "idle", "group": "x"},  # lines without a round pass through
        line(1, windows=[8.0], samples_per_s=8.0),
        line(2, windows=[10.0], samples_per_s=10.0),
    ])
    assert [r.get("samples_per_s") for r in recs] == [2.0, None, 9.0]
    assert report.find(recs, framework="kerascpp", workload="mlp_b128")["windows"] == [8.0, 10.0]


def test_predict_latency_takes_the_median_of_the_rounds():
    recs = report.pool_rounds([
        line(r, workload="predict1", api="predict_on_batch", p50_ms=p50, p99_ms=p50 * 2, mean_ms=p50)
        for r, p50 in ((1, 0.09), (2, 0.08), (3, 0.20))
    ] + [line(1, workload="predict1", api="predict", p50_ms=0.5)])
    by_api = {r["api"]: r for r in recs}
    assert by_api["predict_on_batch"]["p50_ms"] == 0.09
    assert by_api["predict_on_batch"]["p99_ms"] == 0.18
    assert by_api["predict_on_batch"]["p50_ms_rounds"] == [0.09, 0.08, 0.20]
    assert by_api["predict"]["p50_ms"] == 0.5  # another api is another measurement


def test_lines_without_rounds_are_left_as_they_are():
    old = [{"framework": "kerascpp", "workload": "mlp_b128", "windows": [1.0, 2.0], "samples_per_s": 1.5}]
    assert report.pool_rounds([dict(r) for r in old]) == old


def test_paired_rows_take_the_median_of_the_rounds_ratios():
    beside, idle = report.pool_rounds([
        line(1, workload="hog", windows=[6.0], samples_per_s=6.0),
        line(2, workload="hog", windows=[3.0], samples_per_s=3.0),
        line(3, workload="hog", windows=[4.0], samples_per_s=4.0),
    ]), report.pool_rounds([
        line(1, workload="hog_idle", windows=[10.0], samples_per_s=10.0),
        line(2, workload="hog_idle", windows=[10.0], samples_per_s=10.0),
        line(3, workload="hog_idle", windows=[5.0], samples_per_s=5.0),
    ])
    assert "round" not in beside[0]
    # Rounds 0.6, 0.3, 0.8: median 0.6; the pooled medians would give 4 / 10.
    assert report.rounds_ratio(beside[0], idle[0]) == 0.6
    # Without the same rounds on both sides: the pooled figures' ratio.
    assert report.rounds_ratio(beside[0], {"samples_per_s": 8.0}) == 0.5
