"""ParameterServerStrategy on a TF_CONFIG cluster on loopback (issue 47).

Starts tests/cluster/ps_train_driver as chief, worker and ps tasks on 127.0.0.1 (free ports), and
checks: one worker + two ps train to the weights of one process (1e-5), an embedding table split by
FixedShardsPartitioner(2) lands on both ps tasks (each ps logs the shards it holds), requests
without the job's token, with a wrong one or malformed are refused and change nothing, fit without
steps_per_epoch is refused, a killed ps makes every other task exit non-zero within the bound,
naming the ps, and a killed chief makes the worker and the ps do so naming the chief. Every process runs under the test's own timeout and is killed at the end.
"""
import json
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path

import grpc
import h5py
import numpy as np

BUILD = Path(os.environ.get("KERASCPP_BUILD_DIR", "build"))
DRIVER = BUILD / "tests" / "cluster" / "ps_train_driver"
TOKEN = "test-token-7f3a"
BOUND_S = 4
ENV = dict(os.environ, OMP_WAIT_POLICY="passive", KERASCPP_CLUSTER_TOKEN=TOKEN, KERASCPP_MAX_THREADS="1",
           KERASCPP_COLLECTIVE_TIMEOUT=str(BOUND_S))
for var in ("OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "TF_CONFIG"):
    ENV.pop(var, None)
HARD_TIMEOUT_S = 40


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def make_cluster(num_ps, num_workers=1):
    ports = free_ports(1 + num_workers + num_ps)
    cluster = {"chief": [f"127.0.0.1:{ports[0]}"], "worker": [f"127.0.0.1:{p}" for p in ports[1:1 + num_workers]],
               "ps": [f"127.0.0.1:{p}" for p in ports[1 + num_workers:]]}
    tasks = [("chief", 0)] + [("worker", w) for w in range(num_workers)] + [("ps", k) for k in range(num_ps)]
    return cluster, {(t, i): json.dumps({"cluster": cluster, "task": {"type": t, "index": i}}) for t, i in tasks}


def start(config, args):
    return subprocess.Popen([str(DRIVER), *args], env=dict(ENV, TF_CONFIG=config), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


class Job:
    """Task processes, always killed on exit."""

    def __init__(self):
        self.procs = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.communicate()

    def wait(self, names, timeout):
        deadline = time.monotonic() + timeout
        return {n: self.procs[n].communicate(timeout=max(1, deadline - time.monotonic())) for n in names}


def weights(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def max_diff(a, b):
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(float(np.max(np.abs(np.asarray(a[k], np.float64) - np.asarray(b[k], np.float64)))) for k in a)


def header(number, payload):
    """The tag and length of a length-delimited protobuf field (strings, bytes, messages)."""
    tag, out = (number << 3) | 2, bytearray()
    out.append(tag)
    n = len(payload)
    while True:
        out.append((n & 0x7F) | (0x80 if n > 0x7F else 0))
        n >>= 7
        if not n:
            return bytes(out)


def call(address, method, request):
    """Calls ParameterServer.<method> with raw request bytes; returns the status code."""
    with grpc.insecure_channel(address) as channel:
        rpc = channel.unary_unary(f"/kerascpp.parameter_server.ParameterServer/{method}")
        try:
            rpc(request, timeout=5, wait_for_ready=True)
            return grpc.StatusCode.OK
        except grpc.RpcError as e:
            return e.code()


def encode(number, payload):
    """A length-delimited protobuf field, hand-encoded: the test sends what a confused client might."""
    return header(number, payload) + payload


def test_one_worker_two_ps_equal_one_process_and_split_the_table(tmp_path):
    single = subprocess.run([str(DRIVER), "--single", "--weights", str(tmp_path / "one.weights.h5")], env=ENV,
                            capture_output=True, text=True, timeout=HARD_TIMEOUT_S)
    assert single.returncode == 0, single.stderr
    cluster, configs = make_cluster(2)
    args = ["--weights", str(tmp_path / "ps.weights.h5"), "--shards", "2"]
    with Job() as job:
        for k in range(2):
            job.procs[f"ps{k}"] = start(configs[("ps", k)], args)
        # Before the job starts: requests without the token, with a wrong one, or malformed are refused.
        ps0 = cluster["ps"][0]
        assert call(ps0, "Ping", b"") == grpc.StatusCode.PERMISSION_DENIED
        assert call(ps0, "Ping", encode(1, b"wrong-token")) == grpc.StatusCode.PERMISSION_DENIED
        assert call(ps0, "Pull", encode(1, b"wrong-token")) == grpc.StatusCode.PERMISSION_DENIED
        assert call(ps0, "Pull", b"\xff\xff\xff\x0f garbage") != grpc.StatusCode.OK
        # A Create with the token but a shard whose bytes do not match its shape: an error reply.
        bad_tensor = encode(1, b"\x08\x03") + encode(3, b"\x00" * 5)  # shape [3], float32, 5 bytes
        bad_shard = encode(1, b"x") + encode(3, bad_tensor)
        bad_create = encode(1, TOKEN.encode()) + encode(2, b"{}") + encode(3, bad_shard)
        assert call(ps0, "Create", bad_create) == grpc.StatusCode.INVALID_ARGUMENT
        job.procs["chief"] = start(configs[("chief", 0)], args)
        job.procs["worker"] = start(configs[("worker", 0)], args)
        outs = job.wait(["chief", "worker", "ps0", "ps1"], HARD_TIMEOUT_S)
        codes = {n: p.returncode for n, p in job.procs.items()}
    assert all(c == 0 for c in codes.values()), (codes, outs)
    assert max_diff(weights(tmp_path / "ps.weights.h5"), weights(tmp_path / "one.weights.h5")) <= 1e-5
    # Variable 0 is the Embedding table [40, 4]: FixedShardsPartitioner(2) puts rows 0..19 on one ps
    # and 20..39 on the other (round-robin placement).
    held = {n: re.search(r"holds \d+ shard\(s\) \(variable/shard shape\):(.*)", outs[n][1]).group(1).split()
            for n in ("ps0", "ps1")}
    assert held["ps0"][:2] == ["0/0", "(20,"] and held["ps1"][:2] == ["0/1", "(20,"], held


def test_two_workers_taking_steps_in_turn_equal_one_process(tmp_path):
    # Steps run one at a time and each worker pulls the current variables first, so two workers
    # taking turns train to the weights of one process too.
    single = subprocess.run([str(DRIVER), "--single", "--weights", str(tmp_path / "one.weights.h5")], env=ENV,
                            capture_output=True, text=True, timeout=HARD_TIMEOUT_S)
    assert single.returncode == 0, single.stderr
    _, configs = make_cluster(1, num_workers=2)
    args = ["--weights", str(tmp_path / "ps.weights.h5")]
    with Job() as job:
        for (t, i), config in configs.items():
            job.procs[f"{t}{i}"] = start(config, args)
        outs = job.wait(list(job.procs), HARD_TIMEOUT_S)
        codes = {n: p.returncode for n, p in job.procs.items()}
    assert all(c == 0 for c in codes.values()), (codes, outs)
    assert max_diff(weights(tmp_path / "ps.weights.h5"), weights(tmp_path / "one.weights.h5")) <= 1e-5
    steps = [int(re.search(r"steps (\d+)", outs[f"worker{w}"][0]).group(1)) for w in range(2)]
    assert steps == [6, 6], steps  # 12 steps, taken in turn


def test_fit_without_steps_per_epoch_is_refused(tmp_path):
    _, configs = make_cluster(1)
    with Job() as job:
        job.procs["chief"] = start(configs[("chief", 0)], ["--weights", str(tmp_path / "w.h5"), "--omit_steps_per_epoch"])
        (_, err), = job.wait(["chief"], HARD_TIMEOUT_S).values()
        assert job.procs["chief"].returncode != 0
    assert "needs steps_per_epoch" in err, err


def test_a_killed_ps_stops_every_task_naming_it(tmp_path):
    cluster, configs = make_cluster(2)
    args = ["--weights", str(tmp_path / "w.h5"), "--steps_per_epoch", "1000000", "--epochs", "1"]
    with Job() as job:
        for k in range(2):
            job.procs[f"ps{k}"] = start(configs[("ps", k)], args)
        job.procs["chief"] = start(configs[("chief", 0)], args)
        job.procs["worker"] = start(configs[("worker", 0)], args)
        for line in job.procs["ps1"].stderr:  # the variables exist: training is under way
            if "holds" in line:
                break
        time.sleep(0.5)
        os.killpg(job.procs["ps1"].pid, signal.SIGKILL)
        killed_at = time.monotonic()
        outs = job.wait(["chief", "worker", "ps0"], BOUND_S + 20)
        took = time.monotonic() - killed_at
        codes = {n: job.procs[n].returncode for n in ("chief", "worker", "ps0")}
    assert all(c != 0 for c in codes.values()), (codes, outs)
    assert took <= BOUND_S + 10, took
    named = f"ps:1 ({cluster['ps'][1]})"
    for n, (_, err) in outs.items():
        assert named in err, (n, err)


def test_a_killed_chief_stops_the_worker_and_ps_naming_it(tmp_path):
    cluster, configs = make_cluster(1)
    args = ["--weights", str(tmp_path / "w.h5"), "--steps_per_epoch", "1000000", "--epochs", "1"]
    with Job() as job:
        job.procs["ps0"] = start(configs[("ps", 0)], args)
        job.procs["chief"] = start(configs[("chief", 0)], args)
        job.procs["worker"] = start(configs[("worker", 0)], args)
        for line in job.procs["ps0"].stderr:  # the variables exist: training is under way
            if "holds" in line:
                break
        time.sleep(0.5)
        os.killpg(job.procs["chief"].pid, signal.SIGKILL)
        killed_at = time.monotonic()
        outs = job.wait(["worker", "ps0"], BOUND_S + 20)
        took = time.monotonic() - killed_at
        codes = {n: job.procs[n].returncode for n in ("worker", "ps0")}
    assert all(c != 0 for c in codes.values()), (codes, outs)
    assert took <= BOUND_S + 10, took
    for n, (_, err) in outs.items():
        assert f"heard nothing from the coordinator chief:0 ({cluster['chief'][0]})" in err, (n, err)
