// CLI11 validators for the examples' flags, beyond CLI11's own (PositiveNumber, IsMember, ...).
// CLI11 prints "--flag: <message>" and exits non-zero before any data is loaded, so each message
// says what the flag accepts. (CLI::Range and CLI::PositiveNumber let NaN through: every
// comparison with NaN is false.)
#pragma once
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace examples {

// A flag given twice takes its last value, as the official models' absl flags do, so a script's
// defaults can be overridden by appending (scripts/train.sh passes "$@" after its own flags).
// CLI11's default refuses the repeat. Call before adding any option: it sets the defaults of the
// options added after it; every value still goes through the flag's validator. A list flag
// (`->delimiter(',')`) would still collect every occurrence's values; give it
// `->trigger_on_parse()` too, so each occurrence replaces the list (ncf's --layers).
inline void last_flag_wins(CLI::App& app) {
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// A finite number > 0, e.g. a learning rate ("nan", "inf", "0" and "-1" are refused).
inline const CLI::Validator kFinitePositive(
    [](std::string& s) -> std::string {
      double v = 0;
      if (!CLI::detail::lexical_cast(s, v) || !std::isfinite(v) || v <= 0)
        return "must be a finite number > 0, got '" + s + "' (e.g. 0.001)";
      return {};
    },
    "FINITE>0", "FinitePositive");

// A whole number >= 1 (batch sizes, epochs, replicas). CLI::PositiveNumber would do, but its
// message prints the range as 0 to 1.8e308 in full.
inline const CLI::Validator kPositiveInteger(
    [](std::string& s) -> std::string {
      long long v = 0;
      if (!CLI::detail::lexical_cast(s, v) || v < 1) return "must be a whole number >= 1, got '" + s + "'";
      return {};
    },
    "INT>=1", "PositiveInteger");

// -1 (no limit) or a whole number >= 1, e.g. --max_train_steps; 0 would mean "no steps at all".
inline const CLI::Validator kPositiveOrMinusOne(
    [](std::string& s) -> std::string {
      long long v = 0;
      if (!CLI::detail::lexical_cast(s, v) || (v < 1 && v != -1))
        return "must be -1 (no limit) or a whole number >= 1, got '" + s + "'";
      return {};
    },
    "-1|INT>=1", "PositiveOrMinusOne");

// A directory the program can write into: an existing directory, or a path whose nearest
// existing ancestor is a directory (the program creates the rest), in which a probe directory
// can be made and removed again. Permission bits alone do not tell (root passes access(), and
// /proc refuses mkdir), so the check really tries.
inline const CLI::Validator kWritableDirectory(
    [](std::string& s) -> std::string {
      namespace fs = std::filesystem;
      if (s.empty()) return "is empty; pass a directory to write into";
      std::error_code ec;
      fs::path p = fs::absolute(s, ec);
      while (!p.empty() && !fs::exists(p, ec) && p.has_parent_path() && p.parent_path() != p) p = p.parent_path();
      if (!fs::is_directory(p, ec))
        return "'" + s + "' cannot be created: '" + p.string() + "' is not a directory; choose another path";
      std::string probe = (p / ".kerascpp_write_probe_XXXXXX").string();
      if (::mkdtemp(probe.data()) == nullptr)
        return "'" + s + "' is not writable (cannot create anything in '" + p.string() + "': " + std::strerror(errno) +
               "); choose a writable directory";
      ::rmdir(probe.c_str());
      return {};
    },
    "WRITABLE_DIR", "WritableDirectory");

}  // namespace examples
