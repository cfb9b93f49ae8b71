#include "runtime/plan/config/config_presets.h"

#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/config/config_validate.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace bs::runtime {
namespace {

const std::filesystem::path kPresetDir = std::filesystem::path(BS_SOURCE_DIR) / "resources" / "presets";

TEST(ConfigPresets, DemoIsTinyPaciWithEightStagesAndAccumEight)
{
    const RunConfig c = demoConfig();
    EXPECT_EQ(c.model.preset, "tiny");
    EXPECT_EQ(c.schedule.name, "paci");
    EXPECT_EQ(c.pipeline.stages, 8);
    EXPECT_EQ(runtime::shownWindowOf(c), 8);
    EXPECT_EQ(c.device.name, "cpu");
    EXPECT_TRUE(validate(c));
}

TEST(ConfigPresets, EveryPresetIsValidAndMatchesItsResourceFile)
{
    // BS_REGENERATE_PRESETS=1 rewrites the files from the functions (then review the diff).
    const bool regenerate = std::getenv("BS_REGENERATE_PRESETS") != nullptr;
    for (const std::string& name : configPresetNames()) {
        Result<RunConfig> preset = configPreset(name);
        ASSERT_TRUE(preset) << name;
        EXPECT_TRUE(validate(*preset)) << name << ": " << validate(*preset).error().describe();
        const auto path = kPresetDir / (name + ".toml");
        if (regenerate) {
            std::ofstream(path) << toToml(*preset);
        }
        Result<RunConfig> file = loadRunConfig(path);
        ASSERT_TRUE(file) << file.error().describe();
        EXPECT_EQ(*file, *preset) << name << " differs from " << path << "; expected:\n" << toToml(*preset);
    }
}

TEST(ConfigPresets, UnknownPresetNamesTheAllowedOnes)
{
    Result<RunConfig> c = configPreset("huge");
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, ErrorCode::InvalidArgument);
    EXPECT_EQ(c.error().context, "allowed: demo, small, deep, gpt2-medium");
}

} // namespace
} // namespace bs::runtime
