"""Finds the programs the interop tests drive: tests/tools/* and the examples."""
import glob
import os

import pytest


def find_binary(name, override_env=None):
    """Path of the built program `name`.

    An environment variable named by `override_env` wins; otherwise the build directory in
    KERASCPP_BUILD_DIR (set by ctest), or else any build*/ folder of the checkout, is searched.
    Skips the test, saying why, when the program is not built.
    """
    if override_env and os.environ.get(override_env):
        return os.environ[override_env]
    build_dirs = [os.environ["KERASCPP_BUILD_DIR"]] if os.environ.get("KERASCPP_BUILD_DIR") else sorted(
        glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "build*")))
    for build_dir in build_dirs:
        candidates = [os.path.join(build_dir, "tests", "python", name), os.path.join(build_dir, name),
                      *glob.glob(os.path.join(build_dir, "**", name), recursive=True)]
        for path in candidates:
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    pytest.skip(f"{name} is not built (looked in {build_dirs}; set KERASCPP_BUILD_DIR)")
