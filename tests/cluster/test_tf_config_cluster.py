"""MultiWorkerMirroredStrategy on a TF_CONFIG cluster, without mpirun (issue 47, first slice).

Starts tests/mpi/mpi_train_driver as separate processes on 127.0.0.1 (random free ports), one
TF_CONFIG each (chief:0 and worker:0), and checks: the workers meet at the chief's coordination
service and train over Gloo to the same bits on every worker, equal to one process of the same
global batch to 1e-5; a killed worker (or chief) makes the other fail with an error naming it within
the stall bound; a worker whose chief never starts gives up naming the chief. Every process runs
under the test's own timeout and is killed at the end, whatever happened.
"""
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

BUILD = Path(os.environ.get("KERASCPP_BUILD_DIR", "build"))
DRIVER = BUILD / "tests" / "mpi" / "mpi_train_driver"
ENV = dict(os.environ, OMP_WAIT_POLICY="passive")
for var in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "TF_CONFIG"):
    ENV.pop(var, None)  # these tests choose the launcher: none, only TF_CONFIG
HARD_TIMEOUT_S = 240


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def tf_configs(workers):
    ports = free_ports(workers)
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:]]}
    tasks = [("chief", 0)] + [("worker", i) for i in range(workers - 1)]
    return cluster, [json.dumps({"cluster": cluster, "task": {"type": t, "index": i}}) for t, i in tasks]


def weights(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def max_diff(a, b):
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(float(np.max(np.abs(np.asarray(a[k], np.float64) - np.asarray(b[k], np.float64))))
               if np.asarray(a[k]).size else 0.0 for k in a)


class Cluster:
    """The task processes of one job; always killed on exit."""

    def __init__(self, configs, args):
        self.procs = [subprocess.Popen([str(DRIVER), "--strategy", "multi_worker", *args],
                                       env=dict(ENV, TF_CONFIG=c), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, start_new_session=True) for c in configs]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate()

    def wait_all(self, timeout=HARD_TIMEOUT_S):
        deadline = time.monotonic() + timeout
        return [p.communicate(timeout=max(1, deadline - time.monotonic())) for p in self.procs]


def run_one(tmp, args, replicas):
    prefix = str(tmp / "one")
    r = subprocess.run([str(DRIVER), "--strategy", "mirrored", "--replicas", str(replicas), "--weights_prefix",
                        prefix, *args], env=ENV, capture_output=True, text=True, timeout=HARD_TIMEOUT_S)
    assert r.returncode == 0, r.stdout + r.stderr
    return weights(prefix + ".rank0.weights.h5"), r.stdout


@pytest.mark.parametrize("model,optimizer", [("mlp", "sgdm"), ("cnn_sync_bn", "adam")])
def test_two_tf_config_workers_equal_one_process(tmp_path, model, optimizer):
    args = ["--model", model, "--optimizer", optimizer, "--timeout", "60"]
    _, configs = tf_configs(2)
    prefix = str(tmp_path / "multi")
    with Cluster(configs, [*args, "--replicas", "1", "--weights_prefix", prefix]) as job:
        outs = job.wait_all()
        codes = [p.returncode for p in job.procs]
    assert codes == [0, 0], outs
    assert all("workers 2 replicas_in_sync 2" in out and "Gloo" in out for out, _ in outs), outs
    per_rank = [weights(f"{prefix}.rank{k}.weights.h5") for k in range(2)]
    assert max_diff(per_rank[0], per_rank[1]) == 0.0  # the same bits on every worker
    one, one_out = run_one(tmp_path, args, 2)
    assert max_diff(per_rank[0], one) <= 1e-5
    losses = [re.search(r"rank \d final loss (\S+)", out).group(1) for out, _ in outs]
    one_loss = float(re.search(r"final loss (\S+)", one_out).group(1))
    assert len(set(losses)) == 1 and abs(float(losses[0]) - one_loss) <= 1e-5, (losses, one_loss)


STALL_BOUND_S = 5


@pytest.mark.parametrize("victim", ["worker", "chief"])
def test_a_killed_task_makes_the_other_fail_naming_it(tmp_path, victim):
    cluster, configs = tf_configs(2)
    args = ["--model", "mlp", "--epochs", "50", "--timeout", str(STALL_BOUND_S), "--trace_steps",
            "--step_delay_ms", "20", "--weights_prefix", str(tmp_path / "faulty")]
    with Cluster(configs, args) as job:
        chief, worker = job.procs
        killed, survivor = (worker, chief) if victim == "worker" else (chief, worker)
        for line in worker.stdout:  # a few steps in, kill the victim
            if line.startswith("rank 1 step 5"):
                break
        os.killpg(killed.pid, signal.SIGKILL)
        start = time.monotonic()
        _, err = survivor.communicate(timeout=STALL_BOUND_S + 30)
        took = time.monotonic() - start
    assert survivor.returncode != 0, err
    assert took <= STALL_BOUND_S + 15, took
    named = (f"task(s) worker:0 ({cluster['worker'][0]}) died or stalled" if victim == "worker" else
             f"task(s) chief:0 ({cluster['chief'][0]}, the coordinator: it no longer answers) died or stalled")
    assert named in err, err


def test_a_worker_whose_chief_never_starts_gives_up_naming_it(tmp_path):
    cluster, configs = tf_configs(2)
    start = time.monotonic()
    with Cluster(configs[1:], ["--timeout", "3", "--weights_prefix", str(tmp_path / "alone")]) as job:
        (_, err), = job.wait_all(timeout=60)
        code = job.procs[0].returncode
    assert code != 0, err
    assert time.monotonic() - start <= 30
    assert f"chief:0 at {cluster['chief'][0]}" in err, err
