// Every KERASCPP_* environment variable the library reads, in one table. Code reads them only
// through knob() (scripts/check_structure.sh fails on a direct getenv of one elsewhere), and
// docs/environment.md lists the same names with their defaults (checked by the same script).
#pragma once
#include <vector>

namespace kerascpp::detail {

struct Knob {
  const char* name;           // "KERASCPP_MAX_THREADS"
  const char* default_value;  // what leaving it unset means
  const char* values;         // what may be set
  const char* meaning;        // what it changes
};

// The table, in docs/environment.md's order.
const std::vector<Knob>& knobs();

// The variable's value, or nullptr when unset. A name missing from knobs() is a StateError: every
// variable the library reads must be in the table (and so in the docs).
const char* knob(const char* name);

}  // namespace kerascpp::detail
