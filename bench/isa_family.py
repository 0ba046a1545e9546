"""The processor's ISA family, the name bench/ results are kept under (bench/README.md, Files).

lscpu's model name is often just "AMD EPYC" on VMs, so the family comes from the ISA extensions
the kernels choose by: AVX2-only and AVX-512 machines apart, and AVX-512 machines apart by their
bfloat16 hardware: AMX (whose matrix tiles oneDNN runs bfloat16 on), AVX512-BF16 alone (Zen 4), or
neither (kerascpp then emulates bfloat16 with float32 kernels). Run as a script it prints the
family (bench/blas_compare.sh); bench/run.sh imports it.
"""


def cpuinfo():
    """The first processor's /proc/cpuinfo fields."""
    info = {}
    for line in open("/proc/cpuinfo"):
        if not line.strip():
            break
        key, _, value = line.partition(":")
        info[key.strip()] = value.strip()
    return info


def isa_family(flags):
    if "avx512f" in flags:
        return "avx512-amx" if "amx_bf16" in flags else "avx512-bf16" if "avx512_bf16" in flags else "avx512"
    return "avx2" if "avx2" in flags else "other"


if __name__ == "__main__":
    print(isa_family(set(cpuinfo().get("flags", "").split())))
