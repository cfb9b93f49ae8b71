// Every export is re-read: TOML parses back to the same config, CSV to the same schedule,
// JSON and TOML parse, scripts are checked by `bash -n` (see export_scripts.cmake).

#include "runtime/plan/export/export.h"

#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/csv_io.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>

namespace bs::runtime {
namespace {

RunConfig tuned(const std::string& schedule)
{
    RunConfig c = demoConfig();
    c.schedule.name = schedule;
    c.pipeline.accum = schedule == "paci" ? 4 : 0;
    c.pipeline.extraDepth = 0;
    c.optimizer.lr = 6e-4;
    return c;
}

TEST(Export, TomlRoundTripsExactly)
{
    for (const char* name : {"paci", "1f1b", "zb-h2"}) {
        const RunConfig c = tuned(name);
        auto text = exportConfig(c, "toml");
        ASSERT_TRUE(text) << text.error().describe();
        auto back = parseRunConfig(*text, "export");
        ASSERT_TRUE(back) << back.error().describe();
        EXPECT_EQ(*back, c) << name;
    }
}

TEST(Export, PytorchCsvReadsBackToTheSameSchedule)
{
    for (const char* name : {"gpipe", "1f1b", "zb-h1", "zb-h2"}) {
        const RunConfig c = tuned(name);
        auto csv = exportConfig(c, "pytorch-csv");
        ASSERT_TRUE(csv) << csv.error().describe();
        EXPECT_EQ(csv->find('U'), std::string::npos) << "PyTorch CSVs have no update cells";
        ScheduleParams params = toScheduleParams(c);
        params.batches = 1;
        auto reread = scheduleFromCsv(*csv, params);
        ASSERT_TRUE(reread) << reread.error().describe();
        auto generated = makeSchedule(params);
        ASSERT_TRUE(generated);
        EXPECT_EQ(reread->programs, generated->programs) << name;
    }
}

TEST(Export, PytorchCsvOfAnAsyncScheduleSaysWhatCannotBeExpressed)
{
    auto csv = exportConfig(tuned("paci"), "pytorch-csv");
    ASSERT_FALSE(csv);
    EXPECT_EQ(csv.error().code, ErrorCode::Unavailable);
    EXPECT_NE(csv.error().message.find("without a flush"), std::string::npos) << csv.error().message;
}

TEST(Export, DeepSpeedIsValidJsonWithTheTunedBatch)
{
    const RunConfig c = tuned("paci");
    auto text = exportConfig(c, "deepspeed");
    ASSERT_TRUE(text);
    const auto j = nlohmann::json::parse(*text);
    EXPECT_EQ(j["train_micro_batch_size_per_gpu"], c.pipeline.microBatchSize);
    EXPECT_EQ(j["train_batch_size"], c.pipeline.microbatches * c.pipeline.microBatchSize);
    EXPECT_EQ(j["_bubblescope"]["num_stages"], c.pipeline.stages);
    EXPECT_NE(j["_comment"].get<std::string>().find("PACI has no equivalent"), std::string::npos);
    EXPECT_EQ(j["_bubblescope"]["partition"], "flops");
}

TEST(Export, CarriesTheLayerUnitPartition)
{
    RunConfig c = tuned("paci");
    c.pipeline.partition = "explicit";
    c.pipeline.partitionUnits = std::vector<int>(static_cast<std::size_t>(c.pipeline.stages), 1);
    c.pipeline.partitionUnits.back() = layerUnitCount(c.model.shape) - (c.pipeline.stages - 1);
    auto text = exportConfig(c, "deepspeed");
    ASSERT_TRUE(text) << text.error().describe();
    EXPECT_EQ(nlohmann::json::parse(*text)["_bubblescope"]["partition"], c.pipeline.partitionUnits);
    auto toml = exportConfig(c, "toml");
    ASSERT_TRUE(toml);
    EXPECT_NE(toml->find("partition = [1, 1, 1, 1, 1, 1, 1,"), std::string::npos) << *toml;
}

TEST(Export, TorchtitanIsValidToml)
{
    for (const char* name : {"1f1b", "zb-h1", "paci"}) {
        const RunConfig c = tuned(name);
        auto text = exportConfig(c, "torchtitan");
        ASSERT_TRUE(text);
        toml::table t;
        ASSERT_NO_THROW(t = toml::parse(*text)) << *text;
        EXPECT_EQ(t["parallelism"]["pipeline_parallel_degree"].value<int>(), c.pipeline.stages);
        EXPECT_EQ(t["parallelism"]["pipeline_parallel_microbatch_size"].value<int>(), c.pipeline.microBatchSize);
        EXPECT_EQ(t["parallelism"]["pipeline_parallel_schedule_csv"].is_value(), std::string(name) == "zb-h1");
    }
}

// Several stages per rank (p = 4 ranks, 8 layers, v = 2): the CSV has one line per rank and
// reads back; torchtitan gets PyTorch's class name and the layers per stage that imply v;
// Megatron gets its virtual-stage argument; DeepSpeed says what it cannot do.
TEST(Export, MultiStageSchedulesKeepTheirPlacementInEveryEngine)
{
    for (const char* name : {"interleaved-1f1b", "looped-bfs", "interleaved-zb", "zb-v", "dualpipev"}) {
        RunConfig c = tuned(name);
        c.pipeline.stages = 4;
        c.pipeline.accum = 0;
        auto csv = exportConfig(c, "pytorch-csv");
        ASSERT_TRUE(csv) << name << ": " << csv.error().describe();
        EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), 4) << name;
        ScheduleParams params = toScheduleParams(c);
        params.batches = 1;
        auto reread = scheduleFromCsv(*csv, params);
        ASSERT_TRUE(reread) << name << ": " << reread.error().describe();
        EXPECT_EQ(reread->stagesPerRank(), 2) << name;

        auto titan = exportConfig(c, "torchtitan");
        ASSERT_TRUE(titan);
        toml::table t;
        ASSERT_NO_THROW(t = toml::parse(*titan)) << *titan;
        EXPECT_EQ(t["parallelism"]["pipeline_parallel_layers_per_stage"].value<int>(), 1) << name;
        EXPECT_FALSE(t["parallelism"]["pipeline_parallel_schedule_csv"].is_value()) << name;
        auto megatron = exportConfig(c, "megatron");
        ASSERT_TRUE(megatron);
        EXPECT_NE(megatron->find("--num-layers-per-virtual-pipeline-stage 1"), std::string::npos) << name;
        // Only interleaved 1F1B's order is Megatron's own (the catalogue's ScheduleOrder says so).
        const bool megatronsOwn = std::string(name) == "interleaved-1f1b";
        EXPECT_EQ(megatron->find("interleaved 1F1B (virtual pipeline stages) is this schedule") != std::string::npos,
            megatronsOwn)
            << *megatron;
        EXPECT_EQ(megatron->find("is the closest; its order differs from " + std::string(name)) != std::string::npos,
            !megatronsOwn)
            << *megatron;
        auto ds = exportConfig(c, "deepspeed");
        ASSERT_TRUE(ds);
        EXPECT_NE(
            nlohmann::json::parse(*ds)["_comment"].get<std::string>().find("no virtual stages"), std::string::npos);
    }
    RunConfig c = tuned("interleaved-1f1b");
    c.pipeline.stages = 4;
    auto titan = exportConfig(c, "torchtitan");
    ASSERT_TRUE(titan);
    EXPECT_EQ(toml::parse(*titan)["parallelism"]["pipeline_parallel_schedule"].value<std::string>(), "Interleaved1F1B");
    c.schedule.name = "dualpipev";
    titan = exportConfig(c, "torchtitan");
    ASSERT_TRUE(titan);
    EXPECT_EQ(toml::parse(*titan)["parallelism"]["pipeline_parallel_schedule"].value<std::string>(), "DualPipeV");
}

// torchtitan's schedule name is the catalogue's PyTorch class without "Schedule", for every
// schedule PyTorch has a class for (the exporter keeps no table of its own); the others run their
// flush counterpart's (ScheduleInfo::flushCounterpart).
TEST(Export, TorchtitanNamesTheCataloguesPyTorchClass)
{
    int named = 0;
    for (const ScheduleInfo& info : scheduleCatalogue()) {
        RunConfig c = tuned(info.name);
        c.pipeline.stages = 4;
        c.pipeline.microbatches = 8;
        c.pipeline.stagesPerRank = 0;
        auto titan = exportConfig(c, "torchtitan");
        ASSERT_TRUE(titan) << info.name << ": " << titan.error().describe();
        // No class of its own: its flush counterpart's (paci-interleaved: Interleaved1F1B; else 1F1B).
        const std::string expected =
            (info.pytorchClass.empty() ? flushCounterpartOf(info).pytorchClass : info.pytorchClass).substr(8);
        EXPECT_EQ(toml::parse(*titan)["parallelism"]["pipeline_parallel_schedule"].value<std::string>(), expected)
            << info.name;
        named += info.pytorchClass.empty() ? 0 : 1;
    }
    EXPECT_EQ(named, 7); // gpipe, 1f1b, interleaved-1f1b, looped-bfs, interleaved-zb, zb-v, dualpipev
}

// The engines' notes name the flush schedule each runs instead from the catalogue's traits: PACI
// on an interleaved placement is interleaved 1F1B with flushes (it said 1F1B-flush), where the
// engine has virtual stages (Megatron, torchtitan); DeepSpeed has none, so 1F1B-flush there.
TEST(Export, PaciInterleavedNotesNameInterleaved1F1B)
{
    RunConfig c = tuned("paci-interleaved");
    c.pipeline.stages = 4;
    c.pipeline.accum = 2;
    auto megatron = exportConfig(c, "megatron");
    ASSERT_TRUE(megatron) << megatron.error().describe();
    EXPECT_NE(megatron->find("updates all stages together (Interleaved 1F1B)"), std::string::npos) << *megatron;
    EXPECT_EQ(megatron->find("1F1B-flush"), std::string::npos) << *megatron;
    auto titan = exportConfig(c, "torchtitan");
    ASSERT_TRUE(titan) << titan.error().describe();
    EXPECT_NE(titan->find("(Interleaved 1F1B)"), std::string::npos) << *titan;
    EXPECT_EQ(toml::parse(*titan)["parallelism"]["pipeline_parallel_schedule"].value<std::string>(), "Interleaved1F1B");
    auto ds = exportConfig(c, "deepspeed");
    ASSERT_TRUE(ds) << ds.error().describe();
    const std::string note = nlohmann::json::parse(*ds)["_comment"].get<std::string>();
    EXPECT_NE(note.find("updates all stages together (1F1B-flush)"), std::string::npos) << note;
    EXPECT_NE(note.find("no virtual stages"), std::string::npos) << note;
    auto paci = exportConfig(tuned("paci"), "megatron"); // one stage per rank: 1F1B-flush
    ASSERT_TRUE(paci);
    EXPECT_NE(paci->find("updates all stages together (1F1B-flush)"), std::string::npos) << *paci;
}

TEST(Export, MegatronCarriesPipelineAndBatchSizes)
{
    const RunConfig c = tuned("1f1b");
    auto text = exportConfig(c, "megatron");
    ASSERT_TRUE(text);
    EXPECT_NE(text->find("--pipeline-model-parallel-size " + std::to_string(c.pipeline.stages)), std::string::npos);
    EXPECT_NE(text->find("--global-batch-size " + std::to_string(c.pipeline.microbatches * c.pipeline.microBatchSize)),
        std::string::npos);
}

TEST(Export, LaunchScriptsEmbedTheConfigAndTheTrainCommand)
{
    const RunConfig c = tuned("paci");
    for (const char* format : {"torchrun", "slurm"}) {
        auto text = exportConfig(c, format);
        ASSERT_TRUE(text);
        EXPECT_NE(text->find("bubblescope-cli train --distributed --config"), std::string::npos);
        const auto begin = text->find("<<'BUBBLESCOPE_CONFIG'\n");
        const auto end = text->find("BUBBLESCOPE_CONFIG\n", begin + 10);
        ASSERT_NE(begin, std::string::npos);
        auto embedded = parseRunConfig(text->substr(begin + 23, end - begin - 23), "embedded");
        ASSERT_TRUE(embedded) << embedded.error().describe();
        EXPECT_EQ(*embedded, clusterConfig(c, {})); // the tuned config, on GPUs
        EXPECT_EQ(embedded->device.name, "cuda");
    }
    auto slurm = exportConfig(c, "slurm", {.nodes = 2});
    ASSERT_TRUE(slurm);
    EXPECT_NE(slurm->find("#SBATCH --nodes=2"), std::string::npos);
    EXPECT_NE(slurm->find("#SBATCH --gpus-per-node=4"), std::string::npos);
    EXPECT_NE(slurm->find("--nproc-per-node=4"), std::string::npos);
}

TEST(Export, BadRequestsNameTheField)
{
    auto unknown = exportConfig(tuned("paci"), "yaml");
    ASSERT_FALSE(unknown);
    EXPECT_NE(unknown.error().context.find("toml, torchrun, slurm, pytorch-csv"), std::string::npos);
    for (const char* format : {"slurm", "torchrun"}) {
        auto nodes = exportConfig(tuned("paci"), format, {.nodes = 3}); // 8 ranks
        ASSERT_FALSE(nodes) << format;
        EXPECT_EQ(nodes.error().code, ErrorCode::InvalidArgument);
        EXPECT_EQ(nodes.error().message.rfind("nodes: 3 does not divide", 0), 0u) << nodes.error().message;
    }
    auto device = exportConfig(tuned("paci"), "torchrun", {.device = "tpu"});
    ASSERT_FALSE(device);
    EXPECT_EQ(device.error().message.rfind("device:", 0), 0u) << device.error().message;
    auto data = exportConfig(tuned("paci"), "slurm", {.data = "parquet:x"});
    ASSERT_FALSE(data);
    EXPECT_NE(data.error().describe().find("data.spec"), std::string::npos) << data.error().describe();
    RunConfig bad = tuned("paci");
    bad.pipeline.microbatches = 0;
    EXPECT_FALSE(exportConfig(bad, "toml"));
}

} // namespace
} // namespace bs::runtime
