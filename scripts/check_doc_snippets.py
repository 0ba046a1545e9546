#!/usr/bin/env python3
"""Compiles every C++ snippet of README.md and docs/*.md against the public headers (the ctest
`docs_snippets_compile`), so the documentation cannot drift from the API unseen.

A ```cpp block is compiled with -fsyntax-only as C++20 (the snippets use designated
initializers). A block without an #include line is a fragment: it is compiled inside a function, after
`namespace K = kerascpp;` and the umbrella header. What a fragment uses without declaring it (a
`model`, a `train` dataset, a layer class of the reader's own) is declared by an HTML comment on
the line just before the block, invisible on the rendered page:
    <!-- snippet context: K::Model model = make_model(); -->
whose `;;`-separated parts go before the block: inside the function, or at namespace scope for
parts starting `namespace-scope:` (in a whole file, after its last #include).
Blocks that only a C++ interpreter accepts (#pragma cling) are listed as skipped, with why.
Usage: check_doc_snippets.py CXX ROOT
"""
import pathlib
import re
import subprocess
import sys
import tempfile

cxx, root = sys.argv[1], pathlib.Path(sys.argv[2])
pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
block = re.compile(r"(?:<!-- snippet context: (.*?) -->\n)?```cpp\n(.*?)```", re.S)
failed, compiled, skipped = [], 0, []
for page in pages:
    text = page.read_text()
    for m in block.finditer(text):
        line = text[: m.start()].count("\n") + 1
        where = f"{page.relative_to(root)}:{line}"
        context, code = m.group(1) or "", m.group(2)
        if "#pragma cling" in code:
            skipped.append(f"{where}: #pragma cling is for the Cling interpreter only")
            continue
        parts = [c.strip() if c.strip().endswith((";", "}")) else c.strip() + ";" for c in context.split(";;") if c.strip()]
        scope = [c[len("namespace-scope:"):] for c in parts if c.startswith("namespace-scope:")]
        body = [c for c in parts if not c.startswith("namespace-scope:")]
        if any(l.startswith("#include") for l in code.split("\n")):
            # A whole file: the namespace-scope context goes after its last #include.
            lines = code.split("\n")
            last = max(i for i, l in enumerate(lines) if l.startswith("#include"))
            source = "\n".join(lines[: last + 1] + scope + lines[last + 1:])
            if "TEST_CASE" in code:
                source = "#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN\n" + source
        else:
            source = (
                "#include <kerascpp/kerascpp.hpp>\n#include <kerascpp/core/layer_config.hpp>\n#include <memory>\n"
                "namespace K = kerascpp;\n" + "\n".join(scope) + "\nvoid snippet() {\n" + "\n".join(body) + "\n" + code
                + "\n}\n"
            )
        with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
            f.write(source)
        run = subprocess.run(
            [cxx, "-std=c++20", "-fsyntax-only", "-Wall", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
             "-Wno-unused-value", "-I", str(root / "include"), f.name],
            capture_output=True, text=True)
        compiled += 1
        if run.returncode != 0:
            failed.append(f"{where}: does not compile\n{run.stderr[-3000:]}\n--- as compiled:\n{source}")
for s in skipped:
    print("skipped:", s)
for f in failed:
    print("FAILED:", f, file=sys.stderr)
print(f"doc snippets: {compiled - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed or compiled == 0 else 0)
