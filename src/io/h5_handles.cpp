#include "io/h5_handles.hpp"

#include <vector>

#include "kerascpp/error.hpp"

namespace kerascpp::io::h5 {

std::mutex& hdf5_mutex() {
  static std::mutex m;
  return m;
}

QuietHdf5::QuietHdf5() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietHdf5::~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

// The innermost HDF5 messages say what actually failed ("file signature not found",
// "truncated file: eof = ..."); the outer ones only repeat which API call it was.
std::string hdf5_detail() {
  std::vector<std::string> messages;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* out) -> herr_t {
        if (e->desc && *e->desc) static_cast<std::vector<std::string>*>(out)->push_back(e->desc);
        return 0;
      },
      &messages);
  H5Eclear2(H5E_DEFAULT);
  if (messages.empty()) return {};
  std::string detail = messages.back();
  if (messages.size() > 1 && messages[messages.size() - 2] != detail)
    detail = messages[messages.size() - 2] + ": " + detail;
  return " [HDF5: " + detail + "]";
}

[[noreturn]] void h5_fail(const std::string& what) { throw IOError(what + hdf5_detail()); }

Handle checked(hid_t id, Handle::Closer closer, const std::string& what) {
  if (id < 0) h5_fail(what);
  return Handle(id, closer);
}

void check(herr_t status, const std::string& what) {
  if (status < 0) h5_fail(what);
}

}  // namespace kerascpp::io::h5
