// Process state a test changes for one scope and gives back: std::cout / std::cerr captured into
// a string, an environment variable set (the previous value, or its absence, restored).
#pragma once
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

namespace test_scopes {

// Swaps a stream's buffer for a string, as a xeus kernel redirects a cell's output.
struct StreamCapture {
  std::ostream& stream;
  std::ostringstream text;
  std::streambuf* old;
  explicit StreamCapture(std::ostream& s) : stream(s), old(s.rdbuf(text.rdbuf())) {}
  StreamCapture(const StreamCapture&) = delete;
  StreamCapture& operator=(const StreamCapture&) = delete;
  ~StreamCapture() { stream.rdbuf(old); }
};
struct CoutCapture : StreamCapture {
  CoutCapture() : StreamCapture(std::cout) {}
};
struct CerrCapture : StreamCapture {
  CerrCapture() : StreamCapture(std::cerr) {}
};

// Sets (or, given nullptr, unsets) an environment variable until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) saved_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() { saved_ ? ::setenv(name_, saved_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> saved_;
};

}  // namespace test_scopes
