#pragma once
// Deterministic allocation IDs for tests that need many distinct, sortable ones.
#include <cstdio>
#include <string>

namespace cn::testing {

inline std::string numbered_alloc_id(int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-0000-4000-8000-%012x", i, i);
  return buf;
}

}  // namespace cn::testing
