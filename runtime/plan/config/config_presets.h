#pragma once
// Named run configurations. The same configs ship as resources/presets/<name>.toml; a test keeps
// the files and these functions identical.

#include "base/result.h"
#include "runtime/plan/config/run_config.h"

#include <string>
#include <vector>

namespace bs::runtime {

/// The embedded demo: tiny GPT on synthetic data, p = 8 stages, m = a = 8, b = 4, schedule paci,
/// CPU. Valid by construction.
RunConfig demoConfig();

/// "demo" (= demoConfig()), "small" (small GPT, paci, CPU), "gpt2-medium" (the paper's model and
/// setting: p = 8, a = m = 8, b = 16, CUDA). InvalidArgument naming the allowed names otherwise.
Result<RunConfig> configPreset(const std::string& name);
std::vector<std::string> configPresetNames();

} // namespace bs::runtime
