// kerascpp::Error and its categories: the exceptions the library throws for bad input.
// Messages name the layer, shape, file or flag involved and say what to do about it.
//
// The categories follow Keras/Python's so that code can catch what it can handle:
//   ShapeError  a tensor's rank, shape or dtype does not fit (Keras: ValueError on shapes)
//   ValueError  an argument is out of its domain: zero/negative sizes, NaN rates, unknown names
//   IOError     a file or directory is missing, unreadable, unwritable, truncated or corrupt
//   DeviceError a device does not exist, cannot be used, or a device library call failed
//   StateError  a call comes at the wrong time: fit before compile, add after compile, ...
// Every category derives from Error, so `catch (const kerascpp::Error&)` still catches all.
#pragma once
#include <stdexcept>
#include <string>

/// A Keras-style deep learning API in C++.
namespace kerascpp {

/// The base of every exception kerascpp throws for bad input; catch it to catch them all.
class Error : public std::runtime_error {
 public:
  /// An error whose what() is `what`.
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// A tensor's rank, shape or dtype does not fit (Keras: ValueError on shapes).
class ShapeError : public Error {
 public:
  using Error::Error;
};

/// An argument is out of its domain: zero or negative sizes, NaN rates, unknown names.
class ValueError : public Error {
 public:
  using Error::Error;
};

/// A file or directory is missing, unreadable, unwritable, truncated or corrupt.
class IOError : public Error {
 public:
  using Error::Error;
};

/// A device does not exist or cannot be used, or a device library call failed.
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// A call comes at the wrong time: fit before compile, add after compile, ...
class StateError : public Error {
 public:
  using Error::Error;
};

}  // namespace kerascpp
