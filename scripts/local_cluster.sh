#!/usr/bin/env bash
# local_cluster.sh N [--ps P] COMMAND [ARGS...]: runs COMMAND as an N-task TF_CONFIG cluster on this
# machine (chief:0 and worker:0..N-2 on 127.0.0.1, plus ps:0..P-1 with --ps; free ports chosen at
# random), each task with its own TF_CONFIG and its output prefixed by its task name; with --ps and no
# KERASCPP_CLUSTER_TOKEN, a random token is shared by the tasks. Exits with the first non-zero status
# of a task (0 when all succeed); Ctrl-C or any exit kills every task it started.
# Example: scripts/local_cluster.sh 2 build-dev/examples/fashion_mnist --distribution_strategy multi_worker_mirrored
#          scripts/local_cluster.sh 2 --ps 2 build-dev/examples/ncf --small --distribution_strategy parameter_server
set -euo pipefail
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  sed -n 2,8p "$0" >&2
  exit 2
fi
n=$1
shift
num_ps=0
if [ "${1:-}" = "--ps" ]; then
  if ! [[ ${2:-} =~ ^[1-9][0-9]*$ ]]; then
    echo "local_cluster.sh: --ps takes the number of ps tasks (>= 1)" >&2
    exit 2
  fi
  num_ps=$2
  shift 2
  : "${KERASCPP_CLUSTER_TOKEN:=$(python3 -c 'import secrets; print(secrets.token_hex(16))')}"
  export KERASCPP_CLUSTER_TOKEN
fi
total=$((n + num_ps))
# Free ports from the kernel (bind to port 0); the tasks bind them a moment later.
read -r -a ports <<<"$(python3 -c "
import socket
socks = [socket.socket() for _ in range($total)]
for s in socks: s.bind(('127.0.0.1', 0))
print(' '.join(str(s.getsockname()[1]) for s in socks))")"
workers=""
for ((i = 1; i < n; i++)); do workers+="${workers:+, }\"127.0.0.1:${ports[i]}\""; done
ps=""
for ((i = 0; i < num_ps; i++)); do ps+="${ps:+, }\"127.0.0.1:${ports[n + i]}\""; done
cluster="{\"chief\": [\"127.0.0.1:${ports[0]}\"], \"worker\": [${workers}]${ps:+, \"ps\": [${ps}]}}"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM
for ((i = 0; i < total; i++)); do
  if ((i == 0)); then task="chief" index=0; elif ((i < n)); then task="worker" index=$((i - 1)); else task="ps" index=$((i - n)); fi
  TF_CONFIG="{\"cluster\": ${cluster}, \"task\": {\"type\": \"${task}\", \"index\": ${index}}}" \
    "$@" > >(sed -u "s/^/[${task}:${index}] /") 2> >(sed -u "s/^/[${task}:${index}] /" >&2) &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do
  wait "$p" || { rc=$?; ((status)) || status=$rc; }
done
exit "$status"
