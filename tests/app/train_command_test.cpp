// `bubblescope-cli train` as a function: options applied over the demo config, a run directory with
// the summary keys issue 3 lists, usage errors as exit code 2.
#include "app/cli/train_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <nlohmann/json.hpp>

namespace bs::cli {
namespace {

TrainArgs smallRun(const std::filesystem::path& out)
{
    TrainArgs a;
    a.model = "tiny";
    a.schedule = "paci";
    a.stages = 2;
    a.microbatches = 2;
    a.microBatchSize = 1;
    a.steps = 2;
    a.evalInterval = 1;
    a.targetLoss = 100.0; // reached at once: time_to_target_s is set
    a.outDir = out.string();
    a.overwrite = true;
    a.json = true;
    return a;
}

TEST(TrainCommand, WritesARunDirectoryWithTheSummaryKeys)
{
    const std::filesystem::path dir
        = std::filesystem::temp_directory_path() / ("bs_train_command_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    testing::internal::CaptureStdout();
    const int rc = runTrain(smallRun(dir));
    const std::string out = testing::internal::GetCapturedStdout();
    ASSERT_EQ(rc, 0) << out;
    const nlohmann::json printed = nlohmann::json::parse(out);
    std::ifstream file(dir / "summary.json");
    const nlohmann::json summary = nlohmann::json::parse(file);
    EXPECT_EQ(printed["losses"], summary["losses"]);
    for (const char* key : {"final_train_loss", "losses", "val_loss", "virtual_time_s", "wall_time_s",
             "tokens_per_s_virtual", "bubble_fraction", "per_stage", "time_to_target_s"}) {
        EXPECT_TRUE(summary.contains(key)) << key;
    }
    ASSERT_EQ(summary["losses"].size(), 2u);
    ASSERT_EQ(summary["per_stage"].size(), 2u);
    for (const char* key : {"peak_memory_bytes", "max_version_lag", "version_lag_histogram", "mean_drift"}) {
        EXPECT_TRUE(summary["per_stage"][0].contains(key)) << key;
    }
    EXPECT_FALSE(summary["val_loss"].is_null());
    EXPECT_FALSE(summary["time_to_target_s"].is_null());
    EXPECT_TRUE(std::filesystem::exists(dir / "config.toml"));
    EXPECT_TRUE(std::filesystem::exists(dir / "trace.json"));
    std::ifstream metrics(dir / "metrics.jsonl");
    int lines = 0;
    for (std::string line; std::getline(metrics, line);) {
        EXPECT_TRUE(nlohmann::json::parse(line).contains("train_loss"));
        ++lines;
    }
    EXPECT_EQ(lines, 2);
    std::filesystem::remove_all(dir);
}

TEST(TrainCommand, BadValuesAreUsageErrors)
{
    TrainArgs a = smallRun({});
    a.outDir.clear();
    a.stages = 0;
    testing::internal::CaptureStderr();
    EXPECT_EQ(runTrain(a), 2);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("pipeline.stages"), std::string::npos) << err;
    a.stages = 2;
    a.model = "huge";
    testing::internal::CaptureStderr();
    EXPECT_EQ(runTrain(a), 2);
    EXPECT_NE(testing::internal::GetCapturedStderr().find("huge"), std::string::npos);
}

} // namespace
} // namespace bs::cli
