"""Runs a kerascpp notebook cell by cell the way a C++ Jupyter kernel would, and checks it.

Two interpreters:
  --engine cling       Cling through cppyy (the interpreter of xeus-cling), in C++17 with a
                       precompiled header of the standard library built once (--pch).
  --engine clang-repl  clang-repl 19 (the interpreter of xeus-cpp), the cells fed on stdin.

Every code cell runs in order. The `#pragma cling add_include_path/add_library_path/load` lines
are translated into the engine's own calls with the build tree's paths (--include-dir,
--library-dir), whatever paths the notebook shows for an installed kerascpp. A cell whose last
line is an expression without `;` is displayed as xeus does it: `mime_bundle_repr(value)` found
by argument-dependent lookup; the runner records the bundle and checks it (text/plain present,
HTML parses with balanced tags, SVG parses as XML, every PNG — "image/png" or an <img> data
URL — decodes). The run fails on any compile or runtime error, and unless the printed
`key=value` results satisfy every --expect (e.g. --expect 'test_accuracy>=0.80').

--keras-dir DIR first writes, with the project venv's Keras (numpy backend), the weights of the
Keras MLP notebook 04 loads, a few inputs and Keras' predictions for them, and points the
notebook at them through KERASCPP_NOTEBOOK_KERAS_DIR.
"""

import argparse
import base64
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
import zlib
from html.parser import HTMLParser

PRAGMA = re.compile(r'^\s*#\s*pragma\s+cling\s+(add_include_path|add_library_path|load)\s*\(\s*"([^"]*)"\s*\)\s*$')

# What the notebook's displays go through: the bundle of a value as JSON text, by ADL.
PRELUDE = r"""
#include <string>
#include <vector>
namespace kc_runner {
inline std::vector<std::string> bundles;
template <class T>
auto bundle_of(const T& value, int) -> decltype(mime_bundle_repr(value).dump()) {
  return mime_bundle_repr(value).dump();
}
template <class T>
std::string bundle_of(const T&, long) {
  return "";
}
template <class T>
const std::string& record(const T& value) {
  bundles.push_back(bundle_of(value, 0));
  return bundles.back();
}
}  // namespace kc_runner
"""

# Cling's own display hook, cling::printValue(const T*), of the same value: defined once
# kerascpp/notebook/display.hpp (which declares the kerascpp overloads) has been included, before the
# first display, since a qualified name is looked up where the template is defined. "" where no
# overload applies; the text as a JSON string, so that it stays on one line.
PRINT_VALUE = r"""
namespace kc_runner {
template <class T>
auto print_value_of(const T& value, int) -> decltype(cling::printValue(&value)) {
  return cling::printValue(&value);
}
template <class T>
std::string print_value_of(const T&, long) {
  return "";
}
inline std::string last_text;
template <class T>
const std::string& record_text(const T& value) {
  last_text = nlohmann::json(print_value_of(value, 0)).dump();
  return last_text;
}
}  // namespace kc_runner
"""


def log(*args):
    print(*args, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- cells
class Cell:
    def __init__(self, index, source):
        self.index = index
        self.pragmas = []  # (kind, argument)
        self.code_lines = []
        self.display = None  # the expression a cell ends with, without ';'
        for line in source.splitlines():
            m = PRAGMA.match(line)
            if m:
                self.pragmas.append((m.group(1), m.group(2)))
            else:
                self.code_lines.append(line)
        code = [strip_comment(line).rstrip() for line in self.code_lines]
        last = max((i for i, line in enumerate(code) if line.strip()), default=None)
        if last is not None and is_display(code[last].strip(), code[:last]):
            self.display = code[last].strip()
            self.code_lines = self.code_lines[:last]

    def code(self):
        return "\n".join(self.code_lines)


def is_display(tail, before):
    """xeus displays a cell's last expression when it has no ';'. Not: a preprocessor line, the
    end or head of a block, a control statement's head, or the last line of a longer statement."""
    if ";" in tail or tail.startswith(("#", "}")) or tail.endswith("{"):
        return False
    if re.match(r"^(for|if|while|switch|else|do|template|namespace|class|struct)\b", tail):
        return False
    previous = next((line.strip() for line in reversed(before) if line.strip()), "")
    return previous == "" or previous.endswith((";", "}"))


def strip_comment(line):
    """The line without a trailing // comment (string and character literals respected)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def load_cells(path):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    try:  # the schema check, where nbformat is installed (scripts/python_peers.sh)
        import nbformat

        nbformat.validate(nbformat.from_dict(nb))
    except ImportError:
        pass
    assert nb.get("nbformat") == 4, f"{path}: nbformat {nb.get('nbformat')}, expected 4"
    kernel = nb["metadata"]["kernelspec"]
    assert kernel["name"] == "xcpp17" and kernel["language"] == "C++17", f"{path}: kernelspec {kernel}"
    assert nb["metadata"]["language_info"]["name"] == "c++"
    cells = []
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            cells.append(Cell(i, source))
    return cells


# ---------------------------------------------------------------- bundle checks
VOID_TAGS = {"br", "img", "hr", "meta", "input", "link", "col", "area", "base", "wbr", "source"}


class BalancedHTML(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.images, self.errors = [], [], []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs).get("src", ""))
        if tag not in VOID_TAGS:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs).get("src", ""))

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else 'nothing'}>")
        else:
            self.stack.pop()


def check_png(data):
    """Decodes a PNG (8-bit grey or RGB, non-interlaced): signature, chunk CRCs, IHDR, the
    zlib stream and its size, each scanline's filter byte. Returns (width, height)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, f"bad CRC in chunk {kind!r}"
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    assert header, "no IHDR chunk"
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (0, 2) and interlace == 0, f"unexpected PNG header {header}"
    raw = zlib.decompress(idat)
    stride = width * (3 if colour == 2 else 1) + 1
    assert len(raw) == stride * height, f"PNG data holds {len(raw)} bytes, expected {stride * height}"
    assert all(raw[r * stride] <= 4 for r in range(height)), "bad scanline filter byte"
    return width, height


def check_print_value(bundle, text, where):
    """cling::printValue of a kerascpp value: the text a terminal shows, never Cling's fallback
    (the address). Model, History and Dataset print their bundle's text/plain; Tensor prints
    operator<<. Returns whether `text` came from a kerascpp overload."""
    plain = bundle["text/plain"]
    if plain.startswith(("Model: ", "History(", "Dataset(")) or "image/svg+xml" in bundle:
        assert text == plain, f"{where}: cling::printValue gives {text[:80]!r}, text/plain is {plain[:80]!r}"
        return True
    if plain.startswith("Tensor("):
        assert text.startswith("Tensor(") and "shape=" in text, f"{where}: cling::printValue gives {text[:80]!r}"
        return True
    return False


def check_bundle(text, where):
    assert text, f"{where}: the displayed value has no mime_bundle_repr"
    bundle = json.loads(text)
    assert isinstance(bundle.get("text/plain"), str) and bundle["text/plain"], f"{where}: no text/plain"
    pngs = []
    if "text/html" in bundle:
        parser = BalancedHTML()
        parser.feed(bundle["text/html"])
        parser.close()
        assert not parser.errors and not parser.stack, f"{where}: unbalanced HTML {parser.errors} {parser.stack}"
        for src in parser.images:
            assert src.startswith("data:image/png;base64,"), f"{where}: <img> source {src[:40]}"
            pngs.append(base64.b64decode(src.split(",", 1)[1], validate=True))
    if "image/svg+xml" in bundle:
        root = ElementTree.fromstring(bundle["image/svg+xml"])
        assert root.tag.endswith("svg"), f"{where}: SVG root is <{root.tag}>"
        assert root.findall(".//{http://www.w3.org/2000/svg}polyline"), f"{where}: SVG without curves"
    if "image/png" in bundle:
        pngs.append(base64.b64decode(bundle["image/png"], validate=True))
    for png in pngs:
        check_png(png)
    return sorted(bundle), len(pngs)


# ---------------------------------------------------------------- engines
def run_cling(cells, args):
    """In this process: cppyy's Cling. Its C++ stdout goes to a file (cppyy does not capture it)."""
    os.environ["EXTRA_CLING_ARGS"] = "-O2 -std=c++17"
    if args.pch:
        os.makedirs(os.path.dirname(os.path.abspath(args.pch)), exist_ok=True)
        os.environ["CLING_STANDARD_PCH"] = os.path.abspath(args.pch)
    import cppyy  # noqa: E402  (reads the variables above)

    out_path = tempfile.mktemp(prefix="kerascpp_notebook_", suffix=".out")
    sys.stdout.flush()
    saved_stdout = os.dup(1)
    out_fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out_fd, 1)
    printed, bundles, read_pos, print_value_defined = "", [], 0, False
    cppyy.cppdef("#include <cstdio>\n#include <iostream>\n" + PRELUDE)
    try:
        for cell in cells:
            for kind, argument in cell.pragmas:
                if kind == "add_include_path":
                    cppyy.add_include_path(args.include_dir)
                elif kind == "add_library_path":
                    cppyy.add_library_path(args.library_dir)
                else:
                    cppyy.load_library(os.path.join(args.library_dir, "lib" + argument + ".so"))
            try:
                code = cell.code().strip()
                if code:
                    # cppexec appends ';' to code not ending in one, which breaks a cell of only
                    # #include lines: those are declarations, for cppdef.
                    lines = [line for line in code.splitlines() if strip_comment(line).strip()]
                    if all(line.lstrip().startswith("#") for line in lines):
                        cppyy.cppdef(code + "\n")
                    else:
                        cppyy.cppexec(code)
                if cell.display:
                    if not print_value_defined:
                        cppyy.cppdef(PRINT_VALUE)
                        print_value_defined = True
                    cppyy.cppexec(f"kc_runner::record({cell.display});")
                    cppyy.cppexec(f"kc_runner::record_text({cell.display});")
                    bundles.append((cell.index, str(cppyy.gbl.kc_runner.bundles.back()),
                                    json.loads(str(cppyy.gbl.kc_runner.last_text))))
            finally:
                cppyy.cppexec("std::cout.flush(); std::fflush(stdout);")
                with open(out_path, encoding="utf-8", errors="replace") as f:
                    f.seek(read_pos)
                    new = f.read()
                    read_pos += len(new.encode("utf-8", errors="replace"))
                printed += new
                for line in new.splitlines():
                    log(f"  [cell {cell.index}] {line}")
    finally:
        os.dup2(saved_stdout, 1)
        os.close(out_fd)
        os.unlink(out_path)
    return printed, bundles


MARK = "@@kerascpp-notebook@@"


def repl_lines(code):
    """One cell's code as clang-repl input: a preprocessor line stands alone; the rest is joined
    into inputs with backslash continuations (clang-repl reads a line at a time), after
    removing // comments, which would swallow the continued lines."""
    out, chunk = [], []

    def flush():
        if chunk:
            out.extend(line + " \\" for line in chunk[:-1])
            out.append(chunk[-1])
            chunk.clear()

    for line in code.splitlines():
        line = strip_comment(line).rstrip()
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            flush()
            out.append(line.strip())
        else:
            chunk.append(line)
    flush()
    return out


def run_clang_repl(cells, args):
    lines = ["#include <cstdio>", "#include <cstdlib>", "#include <iostream>"] + repl_lines(PRELUDE)
    print_value_defined = False
    for cell in cells:
        lines.append(f'std::cout << "{MARK}cell {cell.index}" << std::endl;')
        for kind, argument in cell.pragmas:
            if kind == "load":
                lines.append(f"%lib {os.path.join(args.library_dir, 'lib' + argument + '.so')}")
        lines += repl_lines(cell.code())
        if cell.display:
            if not print_value_defined:
                lines += repl_lines(PRINT_VALUE)
                print_value_defined = True
            lines.append(f'std::cout << "{MARK}bundle " << kc_runner::record({cell.display}) << std::endl;')
            lines.append(f'std::cout << "{MARK}text " << kc_runner::record_text({cell.display}) << std::endl;')
    lines.append(f'std::cout << "{MARK}end" << std::endl;')
    # clang-repl 19 crashes (SIGSEGV) at its own exit once libkerascpp is loaded and any JIT'd
    # global with a destructor exists (even a std::shared_ptr<int>): the JIT's atexit handlers
    # run after the session is torn down. A kernel never exits that way; end like a killed one.
    lines.append("std::fflush(nullptr); std::_Exit(0);")
    command = [args.clang_repl, "-Xcc", "-std=c++17", "-Xcc", "-O1", "-Xcc", f"-I{args.include_dir}"]
    result = subprocess.run(command, input="\n".join(lines) + "\n", stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=args.timeout, check=False)
    printed, bundles, cell, errors = "", [], None, []
    for line in result.stdout.splitlines():
        if line.startswith(MARK + "cell "):
            cell = int(line[len(MARK) + 5:])
        elif line.startswith(MARK + "bundle "):
            bundles.append((cell, line[len(MARK) + 7:]))
        elif line.startswith(MARK + "text "):
            bundles[-1] = bundles[-1] + (json.loads(line[len(MARK) + 5:]),)
        elif line.startswith(MARK):
            continue
        else:
            log(f"  [cell {cell}] {line}")
            printed += line + "\n"
            if re.search(r"\berror: ", line):
                errors.append(f"cell {cell}: {line}")
    if result.returncode != 0:
        errors.append(f"clang-repl exited with status {result.returncode} in cell {cell}")
    if MARK + "end" not in result.stdout:
        errors.append(f"clang-repl stopped before the end (last cell started: {cell})")
    if errors:
        raise RuntimeError("\n".join(errors))
    return printed, bundles


# ---------------------------------------------------------------- Keras weights for notebook 04
def make_keras_files(directory):
    """The Keras side of notebook 04, in a subprocess of the venv's Python."""
    script = r"""
import os, sys
import numpy as np
import keras
from keras import layers
keras.backend.clear_session()
inputs = keras.Input((28, 28, 1))
x = layers.Flatten()(inputs)
x = layers.Dense(64, activation="relu")(x)
outputs = layers.Dense(10, activation="softmax")(x)
model = keras.Model(inputs, outputs)
model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
model.optimizer.build(model.trainable_variables)
rng = np.random.default_rng(13)
for v in model.weights:  # biases away from zero so a mixed-up bias would show
    v.assign((keras.ops.convert_to_numpy(v) + rng.normal(0, 0.1, tuple(v.shape))).astype("float32"))
d = sys.argv[1]
model.save_weights(os.path.join(d, "keras_mlp.weights.h5"))
x = rng.uniform(0, 1, (6, 28, 28, 1)).astype("<f4")
x.tofile(os.path.join(d, "x.f32"))
model.predict(x, batch_size=6, verbose=0).astype("<f4").tofile(os.path.join(d, "keras_pred.f32"))
"""
    env = dict(os.environ, KERAS_BACKEND="numpy", TF_CPP_MIN_LOG_LEVEL="3")
    subprocess.run([sys.executable, "-c", script, directory], check=True, env=env, timeout=300)


# ---------------------------------------------------------------- main
EXPECT = re.compile(r"^(\w+)(>=|<=|==|<|>)(.+)$")


def check_expectations(printed, expectations):
    values = {}
    for key, value in re.findall(r"(\w+)=(\S+)", printed):
        values[key] = value
    failures = []
    for expectation in expectations:
        m = EXPECT.match(expectation)
        assert m, f"bad --expect {expectation!r}"
        key, op, want = m.groups()
        if key not in values:
            failures.append(f"{key}: not printed")
            continue
        got = values[key]
        try:
            a, b = float(got), float(want)
            ok = {">=": a >= b, "<=": a <= b, "==": a == b, "<": a < b, ">": a > b}[op]
        except ValueError:  # a comparison of two printed values: last_loss<first_loss
            if want in values:
                a, b = float(got), float(values[want])
                ok = {">=": a >= b, "<=": a <= b, "==": a == b, "<": a < b, ">": a > b}[op]
            else:
                ok = op == "==" and got == want
        if not ok:
            failures.append(f"{key}={got}, expected {op} {want}")
        else:
            log(f"ok: {key}={got} ({op} {want})")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebook", nargs="?")
    parser.add_argument("--engine", choices=["cling", "clang-repl"], default="cling")
    parser.add_argument("--include-dir", required=True)
    parser.add_argument("--library-dir", required=True)
    parser.add_argument("--pch", help="Cling's C++17 precompiled header (built on first use)")
    parser.add_argument("--clang-repl", default="clang-repl-19")
    parser.add_argument("--expect", action="append", default=[], help="key>=value on the printed key=value results")
    parser.add_argument("--expect-mime", action="append", default=[], help="a MIME type some display must have")
    parser.add_argument("--keras-dir", help="write the Keras weights notebook 04 loads here")
    parser.add_argument("--steps", default="40", help="KERASCPP_NOTEBOOK_STEPS for the run")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("--build-pch-only", action="store_true", help="build --pch and exit (a ctest fixture)")
    args = parser.parse_args()
    # Exit status 77: the test is skipped (ctest SKIP_RETURN_CODE), the interpreter is not there.
    if args.engine == "cling" or args.build_pch_only:
        try:
            import cppyy_backend  # noqa: F401  (importing cppyy itself would fix the flags too early)
        except ImportError:
            log("cppyy is not installed in this Python (scripts/python_peers.sh installs it): skipped")
            return 77
    elif shutil.which(args.clang_repl) is None:
        log(f"{args.clang_repl} not found (Debian clang-tools-19; scripts/test.sh installs it): skipped")
        return 77
    if args.build_pch_only:
        run_cling([], args)
        log(f"precompiled header ready: {args.pch}")
        return 0
    args.include_dir = os.path.abspath(args.include_dir)
    args.library_dir = os.path.abspath(args.library_dir)

    os.environ["KERASCPP_NOTEBOOK_STEPS"] = args.steps
    if args.keras_dir:
        os.makedirs(args.keras_dir, exist_ok=True)
        make_keras_files(args.keras_dir)
        os.environ["KERASCPP_NOTEBOOK_KERAS_DIR"] = os.path.abspath(args.keras_dir)

    cells = load_cells(args.notebook)
    log(f"{args.notebook}: {len(cells)} code cells, engine {args.engine}")
    try:
        printed, bundles = (run_cling if args.engine == "cling" else run_clang_repl)(cells, args)
    except Exception as e:  # cppyy raises SyntaxError for compile errors and C++ exceptions alike
        log(f"FAILED: {type(e).__name__}: {e}")
        return 1

    failures, seen_mime, images, printed_values = [], set(), 0, 0
    for cell_index, text, value_text in bundles:
        try:
            mimes, pngs = check_bundle(text, f"cell {cell_index}")
            printed_values += check_print_value(json.loads(text), value_text, f"cell {cell_index}")
            seen_mime.update(mimes)
            images += pngs
            log(f"ok: cell {cell_index} displays {', '.join(mimes)}" + (f" ({pngs} PNG)" if pngs else ""))
        except Exception as e:  # noqa: BLE001 (each bad bundle is reported)
            failures.append(f"cell {cell_index}: invalid display bundle: {e}")
    for mime in args.expect_mime:
        if mime not in seen_mime:
            failures.append(f"no display had {mime} (seen: {sorted(seen_mime)})")
    failures += check_expectations(printed, args.expect)
    if failures:
        log("FAILED:\n  " + "\n  ".join(failures))
        return 1
    log(f"passed: {len(cells)} cells, {len(bundles)} displays ({images} PNG images), "
        f"{printed_values} checked through cling::printValue")
    return 0


if __name__ == "__main__":
    sys.exit(main())
