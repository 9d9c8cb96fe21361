#pragma once
// The flags of `run` that configure the services feature, kept out of main.cpp.
#include <string>

#include <CLI/CLI.hpp>

#include "common/util/result.h"
#include "labeler/services/services_settings.h"

namespace cn::labeler {

struct ServicesFlags {
  ServicesSettings settings;
  std::string check_interval = "5s";
  std::string vip_grace = "1h";
};

void add_services_options(CLI::App* cmd, ServicesFlags& flags);

// The settings, with the durations read and the combinations checked.
[[nodiscard]] Result<ServicesSettings> services_settings(const ServicesFlags& flags);

}  // namespace cn::labeler
