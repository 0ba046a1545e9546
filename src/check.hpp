// KERASCPP_CHECK(condition, ErrorType, fmt_string, args...): throws ErrorType with the formatted
// message when condition is false. The message is formatted only on failure, so checks cost a
// branch on the hot path.
#pragma once
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kerascpp/error.hpp"

#define KERASCPP_CHECK(condition, ErrorType, ...)              \
  do {                                                         \
    if (!(condition)) [[unlikely]]                             \
      throw ::kerascpp::ErrorType(::fmt::format(__VA_ARGS__)); \
  } while (false)
