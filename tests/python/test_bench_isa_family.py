"""bench/isa_family.py: the name a benchmark run's results are kept under, from /proc/cpuinfo's
flags (the processors seen so far: Zen 3, Zen 4, the Intel VM with and without AMX)."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_isa_family", ROOT / "bench" / "isa_family.py")
isa_family = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(isa_family)


def test_families_by_vector_width_and_bfloat16_hardware():
    family = isa_family.isa_family
    assert family({"sse4_2", "avx2", "fma"}) == "avx2"  # Zen 3
    assert family({"avx2", "avx512f", "avx512_bf16"}) == "avx512-bf16"  # Zen 4
    assert family({"avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile"}) == "avx512-amx"
    assert family({"avx2", "avx512f", "avx512_vnni"}) == "avx512"  # the Intel VM without bf16
    assert family({"sse4_2"}) == "other"
