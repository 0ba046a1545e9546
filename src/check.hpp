// The library's one way to refuse bad input: KERASCPP_CHECK_<CATEGORY>(condition, fmt_string,
// args...) throws that category of kerascpp::Error (include/kerascpp/error.hpp) with the formatted
// message when condition is false:
//   KERASCPP_CHECK_SHAPE   ShapeError   a rank, shape or dtype does not fit
//   KERASCPP_CHECK_VALUE   ValueError   an argument is out of its domain
//   KERASCPP_CHECK_IO      IOError      a file is missing, unreadable, unwritable or corrupt
//   KERASCPP_CHECK_DEVICE  DeviceError  a device or device library call failed
//   KERASCPP_CHECK_STATE   StateError   a call comes at the wrong time
// The message is formatted only on failure, so a check costs a branch on the hot path.
// A plain `throw ValueError(...)` remains for code that has already decided to fail (the end of
// a switch, a catch that adds context); scripts/check_structure.sh refuses `if (...) throw`
// (scripts/throw_idiom.py).
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kerascpp/error.hpp"

#define KERASCPP_DETAIL_CHECK(condition, ErrorType, ...)       \
  do {                                                         \
    if (!(condition)) [[unlikely]]                             \
      throw ::kerascpp::ErrorType(::fmt::format(__VA_ARGS__)); \
  } while (false)

#define KERASCPP_CHECK_SHAPE(condition, ...) KERASCPP_DETAIL_CHECK(condition, ShapeError, __VA_ARGS__)
#define KERASCPP_CHECK_VALUE(condition, ...) KERASCPP_DETAIL_CHECK(condition, ValueError, __VA_ARGS__)
#define KERASCPP_CHECK_IO(condition, ...) KERASCPP_DETAIL_CHECK(condition, IOError, __VA_ARGS__)
#define KERASCPP_CHECK_DEVICE(condition, ...) KERASCPP_DETAIL_CHECK(condition, DeviceError, __VA_ARGS__)
#define KERASCPP_CHECK_STATE(condition, ...) KERASCPP_DETAIL_CHECK(condition, StateError, __VA_ARGS__)
