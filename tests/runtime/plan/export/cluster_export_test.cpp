// Cluster jobs as they leave the exporter: on GPUs by default (saying so), nodes checked for both
// launch formats, the job name read back by sbatch's own rules as the one argument it was, the
// data asked for, Megatron's warm-up below its decay, and every format written into one folder.

#include "runtime/plan/config/config_presets.h"
#include "runtime/plan/export/export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <sstream>

namespace bs::runtime {
namespace {

RunConfig tunedSmall(const std::string& schedule)
{
    RunConfig c = configPreset("small").value();
    c.schedule.name = schedule;
    c.pipeline.accum = schedule == "paci" ? 4 : 0;
    return c;
}

// The arguments sbatch reads from one `#SBATCH` line: get_argument() of slurm's
// src/sbatch/opt.c (commit 284c3b9), restated: blanks separate arguments outside quotes; '"' or
// '\'' open a quote that only the same character closes; a backslash makes the next character
// literal, inside quotes too; an unquoted '#' ends the line.
std::vector<std::string> sbatchArguments(const std::string& line)
{
    std::vector<std::string> args;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) {
            ++i;
        }
        if (i == line.size()) {
            break;
        }
        std::string arg;
        char quote = 0;
        bool escaped = false;
        bool comment = false;
        for (; i < line.size() && (quote || !std::isspace(static_cast<unsigned char>(line[i]))); ++i) {
            const char c = line[i];
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
                continue;
            } else if (quote) {
                if (c == quote) {
                    quote = 0;
                    continue;
                }
            } else if (c == '"' || c == '\'') {
                quote = c;
                continue;
            } else if (c == '#') {
                comment = true;
                break;
            }
            arg += c;
        }
        EXPECT_EQ(quote, 0) << "sbatch: unmatched quote in " << line;
        if (!arg.empty()) {
            args.push_back(arg);
        }
        if (comment) {
            break;
        }
    }
    return args;
}

TEST(ClusterExport, JobNameIsOneSbatchArgumentWhateverItHolds)
{
    for (const std::string name :
        {"demo --dependency=afterok:1", "a \"b\" \\c #d $(touch x); e 'f' `g`", "x\\", "plain"}) {
        auto script = exportConfig(tunedSmall("paci"), "slurm", {.jobName = name});
        ASSERT_TRUE(script) << script.error().describe();
        std::istringstream lines(*script);
        int jobLines = 0;
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind("#SBATCH ", 0) != 0) {
                continue;
            }
            const auto args = sbatchArguments(line.substr(8));
            ASSERT_EQ(args.size(), 1u) << line;
            if (args[0].rfind("--job-name=", 0) == 0) {
                ++jobLines;
                EXPECT_EQ(args[0], "--job-name=" + name) << line;
            }
        }
        EXPECT_EQ(jobLines, 1) << name;
    }
}

TEST(ClusterExport, ACpuConfigGoesToGpusAndSaysSo)
{
    const RunConfig cpu = tunedSmall("paci");
    ASSERT_EQ(cpu.device.name, "cpu");
    for (const char* format : {"torchrun", "slurm"}) {
        auto script = exportConfig(cpu, format);
        ASSERT_TRUE(script);
        EXPECT_NE(script->find("[device]\nname = \"cuda\""), std::string::npos) << format;
        EXPECT_NE(script->find("--backend nccl"), std::string::npos) << format;
        const auto notes = exportChanges(cpu, format);
        ASSERT_FALSE(notes.empty());
        EXPECT_EQ(notes.front().rfind("device: cpu -> cuda", 0), 0u) << notes.front();
        // Kept on the CPU when asked: Gloo, no GPUs requested, no device note.
        auto kept = exportConfig(cpu, format, {.device = "cpu"});
        ASSERT_TRUE(kept);
        EXPECT_NE(kept->find("--backend gloo"), std::string::npos) << format;
        EXPECT_EQ(kept->find("gpus-per-node"), std::string::npos) << format;
        EXPECT_EQ(kept->find("nvidia-smi"), std::string::npos) << format;
        for (const std::string& note : exportChanges(cpu, format, {.device = "cpu"})) {
            EXPECT_EQ(note.find("device:"), std::string::npos) << note;
        }
    }
    auto slurm = exportConfig(cpu, "slurm", {.nodes = 4});
    ASSERT_TRUE(slurm);
    EXPECT_NE(slurm->find("#SBATCH --gpus-per-node=2\n"), std::string::npos) << *slurm;
    EXPECT_NE(slurm->find("--nproc-per-node=2 "), std::string::npos);
}

TEST(ClusterExport, InterleavedOrdersUseGlooOnGpusAndSaySo)
{
    const RunConfig c = tunedSmall("interleaved-1f1b");
    auto script = exportConfig(c, "torchrun");
    ASSERT_TRUE(script);
    EXPECT_NE(script->find("--backend gloo"), std::string::npos);
    bool said = false;
    for (const std::string& note : exportChanges(c, "torchrun")) {
        said = said || note.rfind("backend: gloo", 0) == 0;
    }
    EXPECT_TRUE(said);
}

TEST(ClusterExport, DataIsAskedForOrGiven)
{
    const RunConfig c = tunedSmall("1f1b");
    auto asked = exportConfig(c, "torchrun");
    ASSERT_TRUE(asked);
    EXPECT_NE(asked->find("DATA_DEFAULT=''\n"), std::string::npos);
    EXPECT_NE(asked->find("--data \"$DATA\""), std::string::npos);
    auto given = exportConfig(c, "slurm", {.data = "bin:/data/my tokens.bin"});
    ASSERT_TRUE(given);
    EXPECT_NE(given->find("DATA_DEFAULT='bin:/data/my tokens.bin'\n"), std::string::npos);
    EXPECT_NE(given->find("spec = \"bin:/data/my tokens.bin\""), std::string::npos); // the embedded config too
}

TEST(ClusterExport, MegatronWarmupStaysBelowDecay)
{
    RunConfig c = tunedSmall("1f1b");
    c.training.steps = 8;
    c.optimizer.warmupSteps = 10;
    auto args = exportConfig(c, "megatron");
    ASSERT_TRUE(args);
    EXPECT_NE(args->find("--lr-warmup-iters 7\n"), std::string::npos) << *args;
    EXPECT_NE(args->find("--lr-decay-iters 8\n"), std::string::npos);
    EXPECT_NE(args->find("--data-path"), std::string::npos);
    EXPECT_NE(args->find("--tokenizer-type NullTokenizer"), std::string::npos);
    EXPECT_NE(args->find("exec torchrun"), std::string::npos);
    ASSERT_FALSE(exportChanges(c, "megatron").empty());
    EXPECT_EQ(exportChanges(c, "megatron").front().rfind("lr-warmup-iters: 10 -> 7", 0), 0u);
}

TEST(ClusterExport, EveryFormatIntoOneFolder)
{
    const auto dir = std::filesystem::temp_directory_path() / ("bs_export_all_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    auto all = exportAll(tunedSmall("paci"), dir.string());
    ASSERT_TRUE(all) << all.error().describe();
    EXPECT_EQ(all->written.size() + all->skipped.size(), exportFormats().size());
    ASSERT_EQ(all->skipped.size(), 1u); // pytorch-csv: PACI has no flush
    EXPECT_EQ(all->skipped.front().rfind("pytorch-csv: ", 0), 0u);
    for (const auto& f : all->written) {
        EXPECT_TRUE(std::filesystem::is_regular_file(f.path)) << f.path;
    }
    auto flush = exportAll(tunedSmall("1f1b"), dir.string()); // over the files already there
    ASSERT_TRUE(flush);
    EXPECT_EQ(flush->written.size(), exportFormats().size());
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace bs::runtime
