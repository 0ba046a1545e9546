#!/usr/bin/env python3
"""Checks (--check) or rewrites (--fix) sources to the project's one throwing idiom (src/check.hpp).

    if (bad) throw ValueError(fmt::format("...", a));   ->  KERASCPP_CHECK_VALUE(!bad, "...", a);
    KERASCPP_CHECK(ok, ShapeError, "...", a);           ->  KERASCPP_CHECK_SHAPE(ok, "...", a);

Only an `if` whose whole body is one throw (with or without braces) and that has no `else` is
rewritten; everything else is left for a person. Conditions are negated by flipping a single
comparison or dropping a leading `!` where that is exact, else wrapped in `!(...)`.
Also refused by --check: the old KERASCPP_CHECK(cond, Type, ...) and a throw of the bare `Error`
base class (every throw names its category).
Usage: throw_idiom.py --check|--fix FILE...
"""
import re
import sys

MACRO = {"ShapeError": "SHAPE", "ValueError": "VALUE", "IOError": "IO", "DeviceError": "DEVICE",
         "StateError": "STATE"}
FLIP = {"==": "!=", "!=": "==", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def match_paren(s, i):
    """s[i] is an opening bracket; return the index just past its partner (skips strings/chars)."""
    depth = 0
    j = i
    while j < len(s):
        c = s[j]
        if c in "\"'":
            q = c
            j += 1
            while s[j] != q:
                j += 2 if s[j] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    raise ValueError("unbalanced")


TEMPLATE_ARGS = re.compile(r"(?<=\w)<[\w:\s,*&]*>(?=\s*[({:])")


def top_level_ops(expr):
    """Binary operators at bracket depth 0 (outside strings and template arguments), with their
    positions; "other" stands for arithmetic and bitwise operators, which make a negation unsafe
    to rewrite."""
    masked = TEMPLATE_ARGS.sub(lambda m: "#" * len(m.group(0)), expr)
    ops = []
    depth = 0
    j = 0
    while j < len(masked):
        c = masked[j]
        if c in "\"'":
            j = skip_string(masked, j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            two = masked[j:j + 2]
            if two in ("->", "::"):
                j += 2
                continue
            if two in ("&&", "||", "==", "!=", "<=", ">="):
                ops.append((two, j))
                j += 2
                continue
            if c in "<>?":
                ops.append((c, j))
            elif c in "+-*/%" and j > 0:
                ops.append(("arith", j))
            elif c in "&|^=" and j > 0:
                ops.append(("other", j))
        j += 1
    return ops


def skip_string(s, j):
    q = s[j]
    j += 1
    while s[j] != q:
        j += 2 if s[j] == "\\" else 1
    return j + 1


def negate(cond):
    cond = " ".join(cond.split())
    ops = top_level_ops(cond)
    kinds = {o[0] for o in ops}
    if not ops:
        if cond.startswith("!"):
            inner = cond[1:].strip()
            if inner.startswith("(") and match_paren(inner, 0) == len(inner):
                inner = inner[1:-1].strip()
            return inner
        if cond.startswith("(") and match_paren(cond, 0) == len(cond):
            return negate(cond[1:-1])
        return "!" + cond
    comparisons = [o for o in ops if o[0] in FLIP]
    if len(comparisons) == 1 and kinds <= set(FLIP) | {"arith"}:
        op, at = comparisons[0]
        return f"{cond[:at].rstrip()} {FLIP[op]} {cond[at + len(op):].lstrip()}"
    # De Morgan over a chain of one connective whose parts each negate without a wrapper.
    for conn, dual in (("||", "&&"), ("&&", "||")):
        if conn in kinds and (dual not in kinds) and "?" not in kinds:
            cuts = [at for op, at in ops if op == conn]
            bounds = [0] + [c + 2 for c in cuts]
            ends = cuts + [len(cond)]
            parts = [negate(cond[b:e]) for b, e in zip(bounds, ends)]
            if all(not p.startswith("!(") for p in parts) and len(parts) <= 3:
                wrap = [f"({p})" if {o[0] for o in top_level_ops(p)} & {"other", "?", "&&", "||"} else p
                        for p in parts]
                return f" {dual} ".join(wrap)
    return f"!({cond})"


def message_args(arg):
    arg = arg.strip()
    if arg.startswith("fmt::format(") and match_paren(arg, len("fmt::format")) == len(arg):
        return arg[len("fmt::format("):-1].strip()
    if re.fullmatch(r'("([^"\\]|\\.)*"\s*)+', arg) and "{" not in arg and "}" not in arg:
        return arg
    return '"{}", ' + arg


IF_RE = re.compile(r"\bif\s*\(")
THROW_RE = re.compile(r"\s*(\{\s*)?throw\s+(?:::kerascpp::|kerascpp::)?(\w+)\s*\(")


def convert(text):
    out = []
    i = 0
    count = 0
    while True:
        m = IF_RE.search(text, i)
        if not m:
            out.append(text[i:])
            break
        # `else if` chains and `if constexpr` are left alone.
        before = text[max(0, m.start() - 10):m.start()]
        open_at = m.end() - 1
        try:
            close = match_paren(text, open_at)
        except (ValueError, IndexError):
            out.append(text[i:m.end()])
            i = m.end()
            continue
        t = THROW_RE.match(text, close)
        if re.search(r"else\s*$", before) or not t or t.group(2) not in MACRO:
            out.append(text[i:m.end()])
            i = m.end()
            continue
        args_open = t.end() - 1
        args_close = match_paren(text, args_open)
        end = args_close
        rest = re.match(r"\s*;", text[end:])
        if not rest:
            out.append(text[i:m.end()])
            i = m.end()
            continue
        end += rest.end()
        if t.group(1):  # braces: the throw must be the only statement
            brace = re.match(r"\s*\}", text[end:])
            if not brace:
                out.append(text[i:m.end()])
                i = m.end()
                continue
            end += brace.end()
        if re.match(r"\s*else\b", text[end:]):
            out.append(text[i:m.end()])
            i = m.end()
            continue
        cond = text[open_at + 1:close - 1]
        # `if (auto x = f())` and `if (init; cond)` declare names the throw may use: leave them.
        if ";" in cond or re.match(r"\s*(auto|const)\b|\s*[\w:<>]+\s+\w+\s*=[^=]", cond):
            out.append(text[i:m.end()])
            i = m.end()
            continue
        msg = message_args(text[args_open + 1:args_close - 1])
        out.append(text[i:m.start()])
        check = negate(cond)
        if "{" in check and "," in check:  # braces do not protect commas from the preprocessor
            check = f"({check})"
        out.append(f"KERASCPP_CHECK_{MACRO[t.group(2)]}({check}, {msg});")
        i = end
        count += 1
    text = "".join(out)
    text, n = re.subn(r"KERASCPP_CHECK\(\s*", "KERASCPP_CHECK(", text)
    def old_check(m):
        return f"KERASCPP_CHECK_{MACRO[m.group(2)]}({m.group(1)}"
    # KERASCPP_CHECK(cond, Type, ...) with cond free of top-level commas.
    res = []
    j = 0
    for m in re.finditer(r"KERASCPP_CHECK\(", text):
        if m.start() < j:
            continue
        close = match_paren(text, m.end() - 1)
        body = text[m.end():close - 1]
        parts = split_top(body)
        if len(parts) >= 3 and parts[1].strip() in MACRO:
            res.append(text[j:m.start()])
            rest = ",".join(parts[2:])
            res.append(f"KERASCPP_CHECK_{MACRO[parts[1].strip()]}({parts[0].strip()},{rest})")
            j = close
            count += 1
    res.append(text[j:])
    return "".join(res), count


def split_top(body):
    parts, depth, start, j = [], 0, 0, 0
    while j < len(body):
        c = body[j]
        if c in "\"'":
            j = skip_string(body, j)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(body[start:j])
            start = j + 1
        j += 1
    parts.append(body[start:])
    return parts


def ensure_include(text, path):
    # check.hpp is found through the src/ include directory of every target.
    if "KERASCPP_CHECK_" not in text or '#include "check.hpp"' in text:
        return text
    lines = text.split("\n")
    last_include = max((k for k, l in enumerate(lines) if l.startswith('#include "')), default=None)
    if last_include is None:
        last_include = max(k for k, l in enumerate(lines) if l.startswith("#include"))
    lines.insert(last_include + 1, '#include "check.hpp"')
    return "\n".join(lines)


BARE_ERROR = re.compile(r"\bthrow\s+(?:::kerascpp::|kerascpp::)?Error\s*\(")


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("--check", "--fix"):
        sys.exit(__doc__)
    fix = sys.argv[1] == "--fix"
    found = 0
    for path in sys.argv[2:]:
        src = open(path).read()
        new, n = convert(src)
        for m in BARE_ERROR.finditer(src):
            print(f"{path}:{src.count(chr(10), 0, m.start()) + 1}: throws the bare Error base class; "
                  "throw its category (ShapeError, ValueError, IOError, DeviceError, StateError)")
            found += 1
        if n and fix:
            open(path, "w").write(ensure_include(new, path))
            print(f"{path}: rewrote {n}")
        elif n:
            print(f"{path}: {n} `if (...) throw` or KERASCPP_CHECK(cond, Type, ...) left; "
                  "run scripts/throw_idiom.py --fix on it")
            found += n
    if found and not fix:
        sys.exit(1)


if __name__ == "__main__":
    main()
