// What loading libkerascpp costs a process that does not use a GPU: resident memory (VmRSS)
// before and after dlopen of the library (argv[1]) must grow by at most argv[2] MiB.
#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

namespace {
long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
    status.ignore(1 << 20, '\n');
  }
  return -1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: load_footprint LIBRARY MAX_MIB\n";
    return 2;
  }
  long before = rss_kib();
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    std::cerr << "dlopen failed: " << dlerror() << '\n';
    return 1;
  }
  long after = rss_kib();
  double grown_mib = double(after - before) / 1024.0;
  long limit = std::atol(argv[2]);
  std::cout << "VmRSS " << before / 1024 << " MiB -> " << after / 1024 << " MiB: loading " << argv[1] << " adds "
            << grown_mib << " MiB (limit " << limit << " MiB)\n";
  return grown_mib <= double(limit) ? 0 : 1;
}
