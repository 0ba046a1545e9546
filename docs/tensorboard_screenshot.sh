#!/usr/bin/env bash
# Reproduces docs/tensorboard_scalars.png: a real screenshot of the TensorBoard
# web UI (Scalars dashboard, epoch_accuracy + epoch_loss, runs train and
# validation) for a kerascpp Fashion-MNIST training run.
#
#   1. trains examples/fashion_mnist (MLP, 5 epochs, 2 CPU replicas), which
#      writes TensorBoard event files to $RUN_DIR/logs/{train,validation};
#   2. starts `tensorboard --logdir $RUN_DIR/logs` from the project venv;
#   3. drives headless Debian chromium over the DevTools protocol: turns off
#      "Ignore outliers in chart scaling" (a localStorage-only setting, so the
#      first epoch is not clipped), opens the Scalars dashboard with the tag
#      filter epoch_(loss|accuracy) and smoothing 0, expands the two matching
#      charts and saves the PNG, cropped below the second chart;
#   4. stops the tensorboard server (also on error).
#
# Usage: docs/tensorboard_screenshot.sh [OUTPUT.png]
# Environment (all optional):
#   BUILD_DIR   build directory holding fashion_mnist   (default: <repo>/build)
#   RUN_DIR     model_dir of the training run           (default: /tmp/tb_shot_run)
#   SKIP_TRAIN  1 = reuse the event files already in $RUN_DIR/logs
#   PORT        tensorboard port                        (default: 6006)
#   TENSORBOARD tensorboard executable                  (default: <repo>/.venv/bin/tensorboard)
#   CHROMIUM    chromium executable                     (default: chromium)
#   WIDTH       viewport width in CSS pixels            (default: 1280)
# Needs root (or passwordless sudo) only when chromium / python3-websocket /
# optipng have to be installed with apt-get.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${1:-$REPO/docs/tensorboard_scalars.png}"
BUILD_DIR="${BUILD_DIR:-$REPO/build}"
RUN_DIR="${RUN_DIR:-/tmp/tb_shot_run}"
PORT="${PORT:-6006}"
TENSORBOARD="${TENSORBOARD:-$REPO/.venv/bin/tensorboard}"
CHROMIUM="${CHROMIUM:-chromium}"
WIDTH="${WIDTH:-1280}"
# Debian's python3 (python3-websocket is installed for it, not for pyenv/venvs).
SYS_PY=/usr/bin/python3

log() { echo "[tensorboard_screenshot] $*" >&2; }

# ---------------------------------------------------------------- packages --
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get install -y --no-install-recommends "$@" ||
    { as_root apt-get update && as_root apt-get install -y --no-install-recommends "$@"; }
}
need=()
command -v "$CHROMIUM" >/dev/null 2>&1 || need+=(chromium fonts-dejavu-core fonts-liberation)
"$SYS_PY" -c 'import websocket' >/dev/null 2>&1 || need+=(python3-websocket)
command -v optipng >/dev/null 2>&1 || need+=(optipng)
if [ "${#need[@]}" -gt 0 ]; then
  log "installing ${need[*]}"
  apt_install "${need[@]}"
fi
[ -x "$TENSORBOARD" ] || { log "no tensorboard at $TENSORBOARD (pip install tensorboard into .venv)"; exit 1; }

# ---------------------------------------------------------------- training --
if [ "${SKIP_TRAIN:-0}" != 1 ] || ! ls "$RUN_DIR"/logs/train/events.out.tfevents.* >/dev/null 2>&1; then
  [ -x "$BUILD_DIR/fashion_mnist" ] || { log "missing $BUILD_DIR/fashion_mnist (build the project first)"; exit 1; }
  rm -rf "$RUN_DIR"   # one event file per run dir, so reruns don't overlay
  log "training: $BUILD_DIR/fashion_mnist --model mlp --train_epochs 5 --cpu_replicas 2 --model_dir $RUN_DIR"
  "$BUILD_DIR/fashion_mnist" --model mlp --train_epochs 5 --cpu_replicas 2 --model_dir "$RUN_DIR"
fi
for run in train validation; do
  ls "$RUN_DIR/logs/$run"/events.out.tfevents.* >/dev/null 2>&1 ||
    { log "no event file in $RUN_DIR/logs/$run"; exit 1; }
done

# ------------------------------------------------------------- tensorboard --
if curl -sf "http://localhost:$PORT/" >/dev/null 2>&1; then
  log "something already answers on port $PORT; stop it or set PORT"; exit 1
fi
WORK="$(mktemp -d /tmp/tb_screenshot.XXXXXX)"
TB_PID=""
cleanup() {
  if [ -n "$TB_PID" ] && kill -0 "$TB_PID" 2>/dev/null; then
    log "stopping tensorboard (pid $TB_PID)"
    kill "$TB_PID" 2>/dev/null || true
    wait "$TB_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
"$TENSORBOARD" --logdir "$RUN_DIR/logs" --port "$PORT" --bind_all >"$WORK/tensorboard.log" 2>&1 &
TB_PID=$!
log "tensorboard pid $TB_PID, waiting for http://localhost:$PORT"
ok=0
for _ in $(seq 120); do
  tags="$(curl -sf "http://localhost:$PORT/data/plugin/scalars/tags" 2>/dev/null || true)"
  if "$SYS_PY" - "$tags" <<'EOF' 2>/dev/null
import json, sys
t = json.loads(sys.argv[1])
sys.exit(0 if all(k in t.get(r, {}) for r in ("train", "validation")
                  for k in ("epoch_loss", "epoch_accuracy")) else 1)
EOF
  then ok=1; break; fi
  kill -0 "$TB_PID" 2>/dev/null || { cat "$WORK/tensorboard.log" >&2; log "tensorboard died"; exit 1; }
  sleep 1
done
[ "$ok" = 1 ] || { cat "$WORK/tensorboard.log" >&2; log "tensorboard never listed the scalar tags"; exit 1; }

# -------------------------------------------------------------- screenshot --
cat >"$WORK/shot.py" <<'EOF'
"""Screenshot TensorBoard's Scalars dashboard with headless chromium over CDP."""
import base64, json, os, shutil, subprocess, sys, tempfile, time, urllib.request
import websocket  # Debian python3-websocket

chromium, port, out, width = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
height = 1400
origin = f"http://localhost:{port}/"
url = origin + "#scalars&tagFilter=epoch_(loss%7Caccuracy)&_smoothingWeight=0"

# Find elements through Polymer's shadow roots.
DEEP = ("var deepAll = () => { const all = []; const walk = (r) => { for (const el of "
        "r.querySelectorAll('*')) { all.push(el); if (el.shadowRoot) walk(el.shadowRoot); } }; "
        "walk(document); return all; };")
# True once the first two charts (epoch_accuracy, epoch_loss) have drawn 2 runs each.
DRAWN = DEEP + """(() => {
  const charts = deepAll().filter(e => e.tagName === 'VZ-LINE-CHART2').slice(0, 2);
  return charts.length === 2 && charts.every(c =>
    [...(c.shadowRoot || c).querySelectorAll('svg path')]
      .filter(p => (p.getAttribute('d') || '').length > 20).length >= 2);
})()"""
EXPAND = DEEP + """(() => {
  const b = deepAll().filter(e => e.tagName === 'PAPER-ICON-BUTTON' &&
                                  e.getAttribute('icon') === 'fullscreen').slice(0, 2);
  b.forEach(x => { x.click(); x.blur(); });
  return b.length;
})()"""
BOTTOM = DEEP + """(() => {
  const c = deepAll().filter(e => e.tagName === 'TF-SCALAR-CARD');
  return c.length >= 2 ? Math.ceil(c[1].getBoundingClientRect().bottom + 16) : null;
})()"""

prof = tempfile.mkdtemp(prefix="tb_screenshot_chromium.")
proc = subprocess.Popen(
    [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader",
     "--hide-scrollbars", "--no-first-run", "--no-default-browser-check",
     "--remote-debugging-port=0", "--remote-allow-origins=*", f"--user-data-dir={prof}",
     f"--window-size={width},{height}", "about:blank"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    portfile = os.path.join(prof, "DevToolsActivePort")
    for _ in range(600):
        if os.path.exists(portfile) and open(portfile).read().strip():
            break
        time.sleep(0.1)
    else:
        raise SystemExit("chromium did not open a DevTools port")
    devport = open(portfile).read().split()[0]
    tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{devport}/json"))
    ws = websocket.create_connection(
        next(t for t in tabs if t["type"] == "page")["webSocketDebuggerUrl"], timeout=120)
    seq = [0]

    def cdp(method, **params):
        seq[0] += 1
        ws.send(json.dumps({"id": seq[0], "method": method, "params": params}))
        while True:
            msg = json.loads(ws.recv())
            if msg.get("id") == seq[0]:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(expr):
        r = cdp("Runtime.evaluate", expression=expr, returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"JS error: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def wait_for(expr, what, timeout=90):
        t0 = time.time()
        while time.time() - t0 < timeout:
            if js(expr):
                return
            time.sleep(0.5)
        raise SystemExit(f"timed out waiting for {what}")

    cdp("Emulation.setDeviceMetricsOverride", width=width, height=height,
        deviceScaleFactor=1, mobile=False)
    # localStorage is per origin: load the origin once, set the preference, then open the view.
    cdp("Page.navigate", url=origin)
    wait_for("document.readyState === 'complete'", "first page load")
    js("localStorage.setItem('_ignoreYOutliers', 'false')")
    cdp("Page.navigate", url=url)
    wait_for(DRAWN, "the epoch_accuracy / epoch_loss charts to draw")
    n = js(EXPAND)
    if n != 2:
        raise SystemExit(f"expected 2 expand buttons, found {n}")
    time.sleep(2)
    wait_for(DRAWN, "the expanded charts to redraw")
    time.sleep(2)  # let the resize animation settle
    bottom = js(BOTTOM) or height
    shot = cdp("Page.captureScreenshot", format="png",
               clip=dict(x=0, y=0, width=width, height=min(height, bottom), scale=1))
    with open(out, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    print(f"wrote {out} ({width}x{min(height, bottom)})")
finally:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(prof, ignore_errors=True)
EOF
mkdir -p "$(dirname "$OUT")"
"$SYS_PY" "$WORK/shot.py" "$CHROMIUM" "$PORT" "$WORK/shot.png" "$WIDTH"
if command -v optipng >/dev/null 2>&1; then optipng -quiet -o2 "$WORK/shot.png"; fi
cp "$WORK/shot.png" "$OUT"
log "saved $OUT ($(stat -c %s "$OUT") bytes)"
