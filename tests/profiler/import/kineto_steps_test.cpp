// Profiles of several steps (issue 33): torch.profiler's usual set-up, schedule(wait=1, warmup=1,
// active=3), records three `ProfilerStep#N` ranges. Real 3-rank jobs (tests/data/kineto/*-3, made
// by make_fixtures.py --microbatches 6 --profile-steps 3 with PyPI's torch 2.11 on the CPU) are
// imported step by step: each step has m = 6, the order PyTorch ran, and a bubble within 1.5 points
// of the one the fixture script computed itself from the monotonic clock around every stage entry
// point and optimizer step. Before, the three steps were analysed as one: m = 7 for 1F1B, forwards
// invented from the gradient scaling (aten::div_) and the optimizer's ops.

#include "profiler/import/job_import.h"
#include "profiler/import/measured_bubbles.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

#ifndef BS_KINETO_DATA_DIR
#error "BS_KINETO_DATA_DIR must name tests/data/kineto"
#endif

namespace bs::profiler::kineto {
namespace {

const std::string kData = BS_KINETO_DATA_DIR;

class ThreeStepJob : public ::testing::TestWithParam<std::string>
{};

TEST_P(ThreeStepJob, EachStepIsImportedOnItsOwn)
{
    const std::string name = GetParam();
    auto job = importKinetoJob({kData + "/" + name});
    ASSERT_TRUE(job) << job.error().describe();
    std::ifstream in(kData + "/" + name + "/order.json");
    const nlohmann::json log = nlohmann::json::parse(in);
    const int world = log["world"].get<int>();
    const int m = log["microbatches"].get<int>();
    ASSERT_EQ(m, 6);
    ASSERT_EQ(job->steps.size(), 3u);
    EXPECT_EQ(job->microbatches, m) << "the whole profile numbers micro-batches per step";
    for (std::size_t k = 0; k < job->steps.size(); ++k) {
        const ImportedJob& step = job->steps[k];
        SCOPED_TRACE(name + " ProfilerStep#" + std::to_string(step.profilerStep));
        EXPECT_EQ(step.profilerStep, static_cast<int>(k) + 2); // wait=1, warmup=1: steps 2, 3, 4
        EXPECT_EQ(step.microbatches, m);
        EXPECT_EQ(step.stages, log["stages"].get<int>());
        EXPECT_EQ(step.pytorchSchedule, job->pytorchSchedule);
        ASSERT_EQ(static_cast<int>(step.actions.size()), world);
        // The order PyTorch ran in this step: no forward made of gradient scaling or optimizer ops.
        for (int r = 0; r < world; ++r) {
            std::vector<std::string> recovered;
            int updates = 0;
            for (const auto& a : step.actions[static_cast<std::size_t>(r)]) {
                if (a.kind == EventKind::Update) {
                    ++updates;
                    continue;
                }
                recovered.push_back(std::to_string(a.stage) + eventLetter(a.kind) + std::to_string(a.microbatch));
            }
            EXPECT_EQ(recovered, log["ran_steps"][k][std::to_string(r)].get<std::vector<std::string>>())
                << "rank " << r;
            EXPECT_EQ(updates, 1) << "rank " << r;
        }
        EXPECT_EQ(step.unmatchedComms, 0u);
        EXPECT_EQ(static_cast<int>(step.transfers.size()), 2 * (step.stages - 1) * m);
        const double independent = log["step_bubbles"][k].get<double>();
        const double measured = measureBubbles(step).bubbleFraction;
        std::printf("%s ProfilerStep#%d: bubble %.2f %% measured, %.2f %% independent\n", name.c_str(),
            step.profilerStep, 100 * measured, 100 * independent);
        EXPECT_NEAR(measured, independent, 0.015);
    }
    // The what-ifs calibrate from the step whose time is the median.
    std::vector<TimeNs> times;
    for (const auto& step : job->steps) {
        times.push_back(stepTimeOf(step));
    }
    std::vector<TimeNs> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(stepTimeOf(medianStep(*job)), sorted[1]);
    EXPECT_EQ(&medianStep(job->steps[0]), &job->steps[0]) << "a step has no steps of its own";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ThreeStepJob, ::testing::Values("1f1b-3", "gpipe-3", "interleaved-3"));

// A profile of one step (every fixture before issue 33) is the step itself.
TEST(KinetoSteps, OneStepProfileHasNoSteps)
{
    auto job = importKinetoJob({kData + "/1f1b-2"});
    ASSERT_TRUE(job) << job.error().describe();
    EXPECT_TRUE(job->steps.empty());
    EXPECT_EQ(&medianStep(*job), &*job);
}

} // namespace
} // namespace bs::profiler::kineto
