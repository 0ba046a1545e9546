// Plumbing shared by the HDF5 reader and writer of `.weights.h5` files: the global HDF5 lock,
// silencing HDF5's own error printing, RAII handles and turning HDF5 failures into kerascpp::Error.
#pragma once
#include <hdf5.h>

#include <mutex>
#include <string>

namespace kerascpp::io::h5 {

// Debian's libhdf5 is the serial, non-thread-safe build: every HDF5 call runs under one lock so
// that callbacks on several replica threads cannot corrupt its global state.
std::mutex& hdf5_mutex();

// HDF5 prints its whole error stack to stderr by default; we turn failures into one
// kerascpp::Error instead, and restore whatever handler the process had afterwards.
class QuietHdf5 {
 public:
  QuietHdf5();
  ~QuietHdf5();
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// " [HDF5: ...]" with the innermost messages of HDF5's error stack (empty if there are none);
// clears the stack.
std::string hdf5_detail();

// Owns one HDF5 identifier; closes it on every path out of a function.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      id_ = o.id_;
      closer_ = o.closer_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  void reset() {
    if (id_ >= 0 && closer_) closer_(id_);
    id_ = H5I_INVALID_HID;
  }
  // For the one close whose failure must be reported rather than swallowed by the destructor.
  herr_t close_checked() {
    herr_t status = id_ >= 0 && closer_ ? closer_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Throws with the caller's context plus HDF5's own reason.
[[noreturn]] void h5_fail(const std::string& what);

Handle checked(hid_t id, Handle::Closer closer, const std::string& what);

void check(herr_t status, const std::string& what);

}  // namespace kerascpp::io::h5
