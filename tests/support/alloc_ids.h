#pragma once
// Allocation IDs for tests: one fixed ID, and deterministic ones for tests that need many
// distinct, sortable IDs.
#include <cstdio>
#include <string>

namespace cn::testing {

// The allocation ID of tests that need just one. Files take it with a using-declaration, which
// may repeat where several test files share one translation unit (unity builds).
inline constexpr const char* kAllocId = "4b1f6c2e-8d3a-9f57-1c2b-7e0a5d9c3f11";
// The address cilium-cni gave that allocation.
inline constexpr const char* kAllocIp = "10.200.3.17";

inline std::string numbered_alloc_id(int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-0000-4000-8000-%012x", i, i);
  return buf;
}

}  // namespace cn::testing
