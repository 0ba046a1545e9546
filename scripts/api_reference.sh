#!/usr/bin/env bash
# Builds the API reference (HTML) from the public headers with docs/Doxyfile into $1 (default
# build/api_reference) and fails on any Doxygen warning, such as an undocumented public class or
# function. Exits 77 (ctest: skipped, with the reason printed) when doxygen is missing;
# scripts/test.sh installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/api_reference}
command -v doxygen >/dev/null || { echo "api_reference.sh: doxygen not found; scripts/install_deps.sh doxygen installs it" >&2; exit 77; }
mkdir -p "$out"
# WARN_AS_ERROR=FAIL_ON_WARNINGS makes doxygen exit non-zero after listing every warning.
# The output directory is appended to the Doxyfile so that the file names no build directory.
{ cat docs/Doxyfile; echo "OUTPUT_DIRECTORY = $out"; } | doxygen -
echo "api_reference.sh: no warnings; open $out/html/index.html"
