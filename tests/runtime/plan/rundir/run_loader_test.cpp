// loadRun(): what the writer wrote comes back as the same typed values (to_json then from_json is
// the identity, NaN losses included), records without a training loss are skipped with a warning,
// and a value of the wrong shape is a ParseError naming the record, never an exception.

#include "runtime/plan/rundir/run_loader.h"

#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/rundir/run_dir_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "temp_dir.h"

namespace bs::runtime {
namespace {

using testing::TempDir;

StageMetrics stage(int s)
{
    StageMetrics m;
    m.stage = s;
    m.version = 3 + s;
    m.paramBytes = 1000 + s;
    m.gradBytes = 900;
    m.optimizerBytes = 2000;
    m.stashBytes = 7 * s;
    m.activationBytes = 55;
    m.peakBytes = 5000 + s;
    m.peakActivationBytes = 66;
    m.peakStashBytes = 77;
    m.peakReservedBytes = 8000 + s; // CUDA stages
    m.maxLag = 2 - s;
    m.lagHistogram = {4, 2, 1};
    m.driftSamples = 9;
    m.meanDrift = 0.125;
    m.maxDrift = 0.5;
    if (s == 1) { // model.recompute's figures are written only when there are some
        m.recomputes = 12;
        m.recomputesOnNewerWeights = 5;
        m.maxRecomputeLag = 2;
    }
    return m;
}

TEST(RunLoader, WhatTheWriterWroteComesBackTyped)
{
    TempDir tmp;
    const auto dir = tmp.path() / "run";
    RunConfig config = demoConfig();
    std::vector<BatchMetrics> batches(2);
    for (int i = 0; i < 2; ++i) {
        BatchMetrics& b = batches[static_cast<std::size_t>(i)];
        b.step = i;
        b.trainLoss = i == 0 ? 5.5 : std::nan(""); // a rank without the last stage reports NaN
        b.valLoss = i == 1 ? std::optional<double>(4.75) : std::nullopt;
        b.virtualTimeS = 0.25 * (i + 1);
        b.wallTimeS = 2.0 * (i + 1);
        b.tokensPerSVirtual = 1234.5;
        b.tokensPerSWall = 99.0;
        b.stages = {stage(0), stage(1)};
    }
    RunSummary summary;
    summary.schedule = "paci";
    summary.steps = 2;
    summary.losses = {5.5, std::nan("")};
    summary.valLosses = {4.75};
    summary.valSteps = {1};
    summary.valVirtualTimesS = {0.5};
    summary.finalTrainLoss = 5.5;
    summary.valLoss = 4.75;
    summary.virtualTimeS = 0.5;
    summary.bubbleFraction = 0.125;
    summary.targetLoss = 5.0;
    summary.timeToTargetS = 0.5;
    summary.stepToTarget = 1;
    summary.stages = {stage(0), stage(1)};
    summary.ranks = {RankMemory{0, {0, 1}, 9000, 700}}; // a rank holding both stages (chunks)
    // A GPU run's fields.
    summary.gpuBubbleFraction = 0.0625;
    summary.device = "cuda:0 (2 stages)";
    summary.dtype = "bf16";
    summary.notes = {"CUPTI kernel lanes off: no permission"};
    summary.kernelProfiling = {{"cupti.kernels", "42"}, {"cupti.dropped_records", "0"}};
    PartitionRecord partition; // pipeline.partition = "measured"
    partition.mode = "measured";
    partition.costs = "measured";
    partition.unitsPerStage = {3, 3};
    partition.layersPerStage = {2, 2};
    partition.predictedStageMs = {1.5, 1.25};
    partition.predictedStageBytes = {1 << 20, 1 << 19};
    partition.predictedImbalance = 1.0909;
    summary.partition = partition;
    profiler::TraceEvent e;
    e.stage = 1;
    e.start = 5;
    e.end = 9;
    {
        auto writer = RunDirWriter::create(dir);
        ASSERT_TRUE(writer) << writer.error().describe();
        ASSERT_TRUE(writer->writeConfig(config));
        for (const auto& b : batches) {
            ASSERT_TRUE(writer->appendMetrics(nlohmann::json(b)));
        }
        ASSERT_TRUE(writer->writeTrace(*profiler::makeSnapshot({2, "virtual", "", {}}, {e})));
        ASSERT_TRUE(writer->writeSummary(nlohmann::json(summary)));
    }
    auto run = loadRun(dir);
    ASSERT_TRUE(run) << run.error().describe();
    EXPECT_EQ(run->config, config);
    ASSERT_EQ(run->metrics.size(), 2u);
    EXPECT_EQ(run->metrics[0].trainLoss, 5.5);
    EXPECT_TRUE(std::isnan(run->metrics[1].trainLoss));
    EXPECT_EQ(run->metrics[1].valLoss, 4.75);
    EXPECT_FALSE(run->metrics[0].valLoss);
    EXPECT_EQ(run->metrics[1].wallTimeS, 4.0);
    ASSERT_EQ(run->metrics[1].stages.size(), 2u);
    EXPECT_TRUE(run->metrics[1].stages[1] == stage(1)); // every field, one type end to end
    EXPECT_TRUE(run->metrics[0] == batches[0]);
    ASSERT_TRUE(run->summary);
    EXPECT_EQ(run->summary->schedule, "paci");
    ASSERT_EQ(run->summary->losses.size(), 2u);
    EXPECT_TRUE(std::isnan(run->summary->losses[1]));
    EXPECT_EQ(run->summary->timeToTargetS, 0.5);
    EXPECT_EQ(run->summary->stepToTarget, 1);
    EXPECT_EQ(run->summary->bubbleFraction, 0.125);
    ASSERT_EQ(run->summary->stages.size(), 2u);
    EXPECT_TRUE(run->summary->stages[0] == stage(0));
    ASSERT_EQ(run->summary->ranks.size(), 1u); // per_rank was written and never read back
    EXPECT_EQ(run->summary->ranks[0].stages, (std::vector<int>{0, 1}));
    EXPECT_EQ(run->summary->ranks[0].peakBytes, 9000);
    EXPECT_EQ(run->summary->ranks[0].peakActivationBytes, 700);
    EXPECT_TRUE(run->summary->stages[1] == stage(1));
    EXPECT_EQ(run->summary->stages[1].peakReservedBytes, 8001);
    EXPECT_EQ(run->summary->gpuBubbleFraction, 0.0625);
    EXPECT_EQ(run->summary->device, "cuda:0 (2 stages)");
    EXPECT_EQ(run->summary->dtype, "bf16");
    EXPECT_EQ(run->summary->notes, summary.notes);
    EXPECT_EQ(run->summary->kernelProfiling, summary.kernelProfiling);
    ASSERT_TRUE(run->summary->partition);
    EXPECT_TRUE(*run->summary->partition == partition);
    ASSERT_TRUE(run->trace);
    EXPECT_EQ(run->trace->size(), 1u);
    EXPECT_TRUE(run->warnings.empty());
    // The statistics alone (Suggest's noise scale): the same records, no trace read.
    auto statistics = loadRun(dir, TraceLoad::Skip);
    ASSERT_TRUE(statistics) << statistics.error().describe();
    EXPECT_FALSE(statistics->trace);
    EXPECT_EQ(statistics->metrics.size(), run->metrics.size());
}

TEST(RunLoader, RunInProgressHasNoSummaryOrTraceAndSkipsRecordsWithoutLoss)
{
    TempDir tmp;
    {
        auto writer = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(writer);
        ASSERT_TRUE(writer->writeConfig(demoConfig()));
        ASSERT_TRUE(writer->appendMetrics({{"step", 0}}));
        ASSERT_TRUE(writer->appendMetrics({{"step", 1}, {"train_loss", 3.0}}));
    }
    auto run = loadRun(tmp.path());
    ASSERT_TRUE(run) << run.error().describe();
    EXPECT_FALSE(run->summary);
    EXPECT_FALSE(run->trace);
    ASSERT_EQ(run->metrics.size(), 1u);
    EXPECT_EQ(run->metrics[0].step, 1);
    ASSERT_EQ(run->warnings.size(), 1u);
    EXPECT_NE(run->warnings[0].find("record 1"), std::string::npos);
}

TEST(RunLoader, AFieldOfTheWrongShapeIsAnErrorNotAnException)
{
    TempDir tmp;
    {
        auto writer = RunDirWriter::create(tmp.path());
        ASSERT_TRUE(writer);
        ASSERT_TRUE(writer->writeConfig(demoConfig()));
        ASSERT_TRUE(writer->writeSummary({{"schedule", 7}})); // not a string
    }
    auto run = loadRun(tmp.path());
    ASSERT_FALSE(run);
    EXPECT_EQ(run.error().code, ErrorCode::ParseError);
    EXPECT_NE(run.error().context.find("summary.json"), std::string::npos) << run.error().describe();
}

// The GPU fields are checked like the others (run_dir_schema.h): a damaged summary names the field.
TEST(RunLoader, AMistypedGpuFieldNamesTheField)
{
    const std::vector<std::pair<nlohmann::json, std::string>> cases{
        {{{"kernel_profiling", {{"cupti.kernels", 42}}}}, "kernel_profiling.cupti.kernels"},
        {{{"kernel_profiling", "all"}}, "kernel_profiling"},
        {{{"notes", {1}}}, "notes[0]"},
        {{{"gpu_bubble_fraction", "half"}}, "gpu_bubble_fraction"},
        {{{"device", 0}}, "device"},
        {{{"per_stage", {{{"peak_reserved_bytes", -1}}}}}, "per_stage[0].peak_reserved_bytes"},
    };
    for (const auto& [summary, field] : cases) {
        TempDir tmp;
        {
            auto writer = RunDirWriter::create(tmp.path());
            ASSERT_TRUE(writer);
            ASSERT_TRUE(writer->writeConfig(demoConfig()));
            ASSERT_TRUE(writer->writeSummary(summary));
        }
        auto run = loadRun(tmp.path());
        ASSERT_FALSE(run) << summary.dump();
        EXPECT_EQ(run.error().code, ErrorCode::ParseError);
        EXPECT_NE(run.error().context.find("summary.json: " + field), std::string::npos) << run.error().describe();
    }
}

} // namespace
} // namespace bs::runtime
