#!/usr/bin/env bash
# Formats every C++/CUDA source with .clang-format (clang-format-19), or with --check lists the
# files that differ and exits 1 (the ctest `clang_format` runs the check). Exits 77 (ctest: skipped,
# with the reason printed) when clang-format-19 is missing; scripts/test.sh installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=$(command -v clang-format-19 || true)
[ -n "$tool" ] || { echo "format.sh: clang-format-19 not found; scripts/install_deps.sh clang-format-19 installs it" >&2; exit 77; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$tool" --dry-run --Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=1; fi
  done
  [ $bad -eq 0 ] || echo "run scripts/format.sh to format them" >&2
  exit $bad
fi
"$tool" -i "${files[@]}"
