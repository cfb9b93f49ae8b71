// bf16 mixed precision on the CPU (autocast to bf16; fp32 master weights, gradients and AdamW
// state): a run trains, its losses are finite and close to fp32's, under a flush schedule and
// under PACI's in-place LocalAccumulator.
#include "runtime/train/exec/run_session.h"
#include "tests/support/tiny_run_config.h"
#include "tests/support/train_run.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace bs::runtime {
namespace {

RunSummary train(const RunConfig& config)
{
    return bs::test::trainRun(config).summary;
}

class Bf16OnTheCpu : public ::testing::TestWithParam<std::string>
{};

TEST_P(Bf16OnTheCpu, TrainsCloseToFp32WithFp32MasterWeights)
{
    RunConfig config = bs::test::tinyRunConfig(GetParam(), 6, 2, 4);
    config.model.dtype = "fp32";
    const RunSummary fp32 = train(config);
    config.model.dtype = "bf16";
    const RunSummary bf16 = train(config);
    ASSERT_EQ(fp32.losses.size(), 6u);
    ASSERT_EQ(bf16.losses.size(), 6u);
    EXPECT_EQ(bf16.dtype, "bf16");
    EXPECT_EQ(fp32.dtype, "fp32");
    double worst = 0.0;
    for (std::size_t i = 0; i < bf16.losses.size(); ++i) {
        ASSERT_TRUE(std::isfinite(bf16.losses[i])) << "step " << i;
        worst = std::max(worst, std::abs(bf16.losses[i] - fp32.losses[i]) / fp32.losses[i]);
    }
    std::printf("%s: bf16 vs fp32 worst relative loss difference over 6 steps: %.2e\n", GetParam().c_str(), worst);
    EXPECT_LT(worst, 0.03) << "bf16 rounding moves the loss by a few per mille, not more";
    EXPECT_GT(worst, 0.0) << "bf16 really ran (an fp32 run would match exactly)";
    EXPECT_LT(bf16.losses.back(), bf16.losses.front()) << "the model learns in bf16";
    ASSERT_EQ(bf16.stages.size(), fp32.stages.size());
    for (std::size_t s = 0; s < bf16.stages.size(); ++s) {
        EXPECT_EQ(bf16.stages[s].paramBytes, fp32.stages[s].paramBytes) << "master weights stay fp32";
        EXPECT_EQ(bf16.stages[s].optimizerBytes, fp32.stages[s].optimizerBytes) << "AdamW state stays fp32";
    }
}

INSTANTIATE_TEST_SUITE_P(Schedules, Bf16OnTheCpu, ::testing::Values("1f1b", "paci"));

TEST(Bf16OnTheCpu, TheReferenceTrainerRunsInBf16Too)
{
    RunConfig config = bs::test::tinyRunConfig("1f1b", 3, 2, 4);
    config.model.dtype = "bf16";
    SessionOptions o;
    o.reference = true;
    auto session = RunSession::create(config, o);
    ASSERT_TRUE(session) << session.error().describe();
    ASSERT_TRUE(session->run());
    for (double l : session->summary().losses) {
        EXPECT_TRUE(std::isfinite(l));
    }
}

} // namespace
} // namespace bs::runtime
