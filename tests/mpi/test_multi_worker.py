"""MultiWorkerMirroredStrategy over MPI on this machine's loopback (issue 12).

Runs tests/mpi/mpi_train_driver under `mpirun -np 2` and alone (MirroredStrategy with the same
global batch and seed), and checks: equal final weights (every worker holds the same bits; the
one-process run agrees to 1e-5), one set of callback files written by the chief only, and that a
killed or stopped worker makes the others fail with the peer/stall error within the bound, after
which rerunning resumes from the backup and ends equal to an uninterrupted run.
"""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

BUILD = Path(os.environ.get("KERASCPP_BUILD_DIR", "build"))
DRIVER = BUILD / "tests" / "mpi" / "mpi_train_driver"
MPIEXEC = os.environ.get("MPIEXEC", "mpirun")
# OpenMPI refuses root without these; --oversubscribe: more workers than the 2 cores' slots.
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_WAIT_POLICY="passive",
           OMPI_MCA_btl_vader_single_copy_mechanism="none")  # containers forbid the ptrace-based copy
MPI_FLAGS = ["--oversubscribe", "--bind-to", "none"]


def weights(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def max_diff(a, b):
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(float(np.max(np.abs(np.asarray(a[k], np.float64) - np.asarray(b[k], np.float64))))
               if np.asarray(a[k]).size else 0.0 for k in a)


def run_one(tmp, args, replicas):
    prefix = str(tmp / "one")
    r = subprocess.run([str(DRIVER), "--strategy", "mirrored", "--replicas", str(replicas), "--weights_prefix",
                        prefix, *args], env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return weights(prefix + ".rank0.weights.h5"), r.stdout


def mpirun(tmp, args, replicas, workers=2, name="multi", extra_env=None, **kw):
    prefix = str(tmp / name)
    cmd = [MPIEXEC, "-np", str(workers), *MPI_FLAGS, str(DRIVER), "--strategy", "multi_worker", "--replicas",
           str(replicas), "--weights_prefix", prefix, *args]
    return prefix, subprocess.run(cmd, env=dict(ENV, **(extra_env or {})), capture_output=True, text=True,
                                  timeout=kw.get("timeout", 300))


def check_equal(tmp, args, local, workers=2):
    one, one_out = run_one(tmp, args, local * workers)
    prefix, r = mpirun(tmp, args, local, workers)
    assert r.returncode == 0, r.stdout + r.stderr
    per_rank = [weights(f"{prefix}.rank{k}.weights.h5") for k in range(workers)]
    for k in range(1, workers):  # the mirrors never drift: the same bits on every worker
        assert max_diff(per_rank[0], per_rank[k]) == 0.0
    assert max_diff(per_rank[0], one) <= 1e-5
    # Logs cover every replica of every worker: the same loss on every worker, and as one process.
    losses = re.findall(r"rank \d final loss (\S+)", r.stdout)
    assert len(losses) == workers and len(set(losses)) == 1, r.stdout
    one_loss = float(re.search(r"final loss (\S+)", one_out).group(1))
    assert abs(float(losses[0]) - one_loss) <= 1e-5
    # A metric of confusion counts (AUC: 800 totals) adds up over workers: the same on every worker,
    # and as one process (exact counts; a tolerance only for a prediction crossing a bucket edge).
    aucs = re.findall(r"rank \d final class0_auc (\S+) val_class0_auc (\S+)", r.stdout)
    one_auc = re.search(r"final class0_auc (\S+) val_class0_auc (\S+)", one_out).groups()
    assert len(aucs) == workers and len(set(aucs)) == 1, r.stdout
    assert all(abs(float(a) - float(b)) <= 1e-3 for a, b in zip(aucs[0], one_auc)), (aucs, one_auc)
    assert 0.3 < float(one_auc[0]) < 1.0
    # predict() returns every row on every worker, equal to one process's.
    sums = re.findall(r"predict rows 37 checksum (\S+)", r.stdout)
    one_sum = float(re.search(r"predict rows 37 checksum (\S+)", one_out).group(1))
    assert len(sums) == workers and all(abs(float(s) - one_sum) <= 1e-4 for s in sums), (r.stdout, one_out)


# 250 examples, global batch 25, 3 epochs: 30 steps.
@pytest.mark.parametrize("model", ["mlp", "cnn_bn"])
@pytest.mark.parametrize("optimizer", ["sgdm", "adam", "nadam", "adam_loss_scale"])
def test_two_workers_equal_one_process(tmp_path, model, optimizer):
    check_equal(tmp_path, ["--model", model, "--optimizer", optimizer], local=1)


def test_two_workers_of_two_replicas_equal_four_replicas(tmp_path):
    check_equal(tmp_path, ["--model", "cnn_bn", "--optimizer", "adam"], local=2)


def test_uneven_global_batch_and_partial_last_batch(tmp_path):
    # 250 / 30: eight batches of 30 (shards 8, 8, 7, 7) and a last one of 10 (3, 3, 2, 2).
    check_equal(tmp_path, ["--model", "cnn_sync_bn", "--optimizer", "sgdm", "--batch", "30"], local=2)


def test_sample_weights_over_workers_with_a_partial_last_batch(tmp_path):
    # (x, y, sample_weight) data with weighted_metrics: the weighted loss and gradients, and the
    # weighted totals (Σw·v, Σw; weighted confusion counts) gathered over workers, equal one process.
    args = ["--model", "cnn_sync_bn", "--optimizer", "sgdm", "--batch", "30", "--sample_weights"]
    check_equal(tmp_path, args, local=2)
    _, one_out = run_one(tmp_path, args, 4)
    _, r = mpirun(tmp_path, args, 2, name="weighted")
    assert r.returncode == 0, r.stdout + r.stderr
    pattern = r"final weighted_accuracy (\S+) weighted_class0_auc (\S+) val_weighted_class0_auc (\S+)"
    multi = re.findall(pattern, r.stdout)
    one = re.search(pattern, one_out).groups()
    assert len(multi) == 2 and len(set(multi)) == 1, r.stdout
    assert all(abs(float(a) - float(b)) <= 1e-3 for a, b in zip(multi[0], one)), (multi, one)


def test_only_the_chief_writes_and_tensorboard_sees_one_value_per_epoch(tmp_path):
    from tensorboard.backend.event_processing import event_accumulator

    model_dir = tmp_path / "run"
    _, r = mpirun(tmp_path, ["--model", "cnn_bn", "--model_dir", str(model_dir)], 1)
    assert r.returncode == 0, r.stdout + r.stderr
    files = sorted(str(p.relative_to(model_dir)) for p in model_dir.rglob("*") if p.is_file())
    ckpts = [f for f in files if f.startswith("ckpt/")]
    assert ckpts == ["ckpt/e01.weights.h5", "ckpt/e02.weights.h5", "ckpt/e03.weights.h5"], files
    rows = (model_dir / "log.csv").read_text().strip().splitlines()
    assert len(rows) == 1 + 3, rows  # a header and one row per epoch: nobody else appended
    assert not (model_dir / "backup").exists() or not any((model_dir / "backup").iterdir()), files
    for run in ("train", "validation"):
        events = [f for f in files if f.startswith(f"tb/{run}/")]
        assert len(events) == 1, files  # one writer: the chief (a second would add its own file)
        acc = event_accumulator.EventAccumulator(str(model_dir / "tb" / run),
                                                 size_guidance={"tensors": 0, "scalars": 0})
        acc.Reload()
        for tag in ("epoch_loss", "epoch_accuracy"):
            assert tag in acc.Tags()["tensors"], acc.Tags()
            assert [e.step for e in acc.Tensors(tag)] == [0, 1, 2]
    assert set(files) == set(ckpts) | {"log.csv"} | {f for f in files if f.startswith("tb/")}, files


STALL_BOUND_S = 5  # the collective timeout the fault tests run with


@pytest.mark.parametrize("fault", ["SIGKILL", "SIGSTOP"])
def test_a_lost_worker_stops_the_job_with_a_clear_error_and_a_rerun_resumes(tmp_path, fault):
    args = ["--model", "mlp", "--epochs", "6", "--timeout", str(STALL_BOUND_S)]
    model_dir = tmp_path / "job"
    cmd = [MPIEXEC, "-np", "2", *MPI_FLAGS, str(DRIVER), "--strategy", "multi_worker", "--weights_prefix",
           str(tmp_path / "faulty"), "--model_dir", str(model_dir), "--trace_steps", "--step_delay_ms", "40", *args]
    job = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    victim = None
    try:
        for line in job.stdout:  # wait until worker 1 is well into epoch 3 (10 steps per epoch)
            m = re.match(r"rank 1 pid (\d+)", line)
            if m:
                victim = int(m.group(1))
            if line.startswith("rank 1 step 25"):
                break
        assert victim, "worker 1 never started"
        os.kill(victim, getattr(signal, fault))
        start = time.monotonic()
        out, err = job.communicate(timeout=STALL_BOUND_S + 30)  # the test's own hard bound
        took = time.monotonic() - start
    finally:
        if job.poll() is None:
            job.kill()
        if victim:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(victim, sig)
                except ProcessLookupError:
                    pass
    assert job.returncode != 0, err
    assert took <= STALL_BOUND_S + 10, took
    if fault == "SIGSTOP":  # the survivor's stall detector names the rank that did not arrive
        assert "worker(s) 1 (last at collective" in err and "did not arrive" in err, err
    else:  # mpirun ends the job when a worker dies; the survivor says what it was doing
        assert "worker 0 was terminated by the MPI launcher while waiting for" in err, err
    # Rerunning the same job resumes from the chief's backup and ends equal to an uninterrupted run.
    rerun = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    # Killed in epoch 3 or later: epochs 1-2 are in the backup, so at most 4 of the 6 epochs run again.
    steps_run = len(re.findall(r"^rank 0 step", rerun.stdout, re.M))
    assert 0 < steps_run <= 40 and steps_run % 10 == 0, rerun.stdout
    resumed = weights(f"{tmp_path / 'faulty'}.rank0.weights.h5")
    prefix, clean = mpirun(tmp_path, [*args, "--model_dir", str(tmp_path / "clean")], 1, name="clean")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert max_diff(resumed, weights(f"{prefix}.rank0.weights.h5")) <= 1e-5


@pytest.mark.parametrize("policy", ["FILE", "DATA", "AUTO", "OFF"])
def test_auto_shard_policies_split_the_input_between_workers(tmp_path, policy):
    # Five files of uneven length; experimental_distribute_dataset gives each worker its part.
    files, lines = [], []
    for i in range(5):
        path = tmp_path / f"part{i}.txt"
        rows = [f"f{i}-{j}" for j in range(i + 1)]
        path.write_text("".join(r + "\n" for r in rows))
        files.append(str(path))
        lines += rows
    cmd = [MPIEXEC, "-np", "2", *MPI_FLAGS, str(DRIVER), "--weights_prefix", str(tmp_path / "unused"),
           "--shard_policy", policy, "--shard_files", *files]
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    got = {0: [], 1: []}
    for rank, line in re.findall(r"^rank (\d) element (\S+)$", r.stdout, re.M):
        got[int(rank)].append(line)
    if policy == "OFF":  # every worker reads everything
        assert got[0] == lines and got[1] == lines
        return
    # FILE, DATA and AUTO (files here, so FILE): every line once over the two workers.
    assert sorted(got[0] + got[1]) == sorted(lines)
    if policy in ("FILE", "AUTO"):
        assert all(int(line[1]) % 2 == rank for rank in (0, 1) for line in got[rank])
    else:
        assert got[0] == lines[0::2] and got[1] == lines[1::2]


def test_fit_with_the_file_policy_splits_global_batches_and_says_so(tmp_path):
    # fit does not FILE-shard: the same weights as one process, and one notice from the chief.
    args = ["--model", "mlp", "--epochs", "1", "--shard_policy", "FILE"]
    one, _ = run_one(tmp_path, args, 2)
    prefix, r = mpirun(tmp_path, args, 1)
    assert r.returncode == 0, r.stdout + r.stderr
    assert max_diff(one, weights(prefix + ".rank0.weights.h5")) < 1e-5
    assert r.stderr.count("applies to distribute::experimental_distribute_dataset only") == 1, r.stderr
