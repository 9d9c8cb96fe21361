#pragma once
// Whole documents: kind, apiVersion, metadata, spec/specs (each rule through check_rule).
#include <nlohmann/json.hpp>

#include "common/util/result.h"

namespace cn::policy {

inline constexpr std::string_view kApiVersion = "cilium.io/v2";
inline constexpr std::string_view kKindNamespaced = "CiliumNetworkPolicy";
inline constexpr std::string_view kKindClusterwide = "CiliumClusterwideNetworkPolicy";

// The checks of validate_policy_document() on an already parsed value.
[[nodiscard]] Status validate_policy_object(const nlohmann::json& doc);

}  // namespace cn::policy
