// Against the real peer: torch.distributed.pipelining's own schedule objects (PyPI torch in the
// project's venv). For seven schedules at two (p, m, v) each, Bubblescope's per-rank compute
// order must equal PyTorch's pipeline_order, PyTorch's _load_csv must read the CSV Bubblescope
// writes into that order, and Bubblescope must read the CSV PyTorch writes (_dump_csv) back into
// its own schedule. Skips, with the reason, where the venv's python cannot import torch.

#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/csv_io.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace bs::runtime {
namespace {

struct PeerCase
{
    std::string name; // Bubblescope's
    int p, m, v;
    std::string style; // PyTorch's placement style for the stage mapping
    std::string torchClass;
    std::string file() const
    {
        return name + "_p" + std::to_string(p) + "_m" + std::to_string(m) + "_v" + std::to_string(v);
    }
    std::string arg() const
    {
        return name + ":" + std::to_string(p) + ":" + std::to_string(m) + ":" + std::to_string(v) + ":" + style + ":"
            + torchClass;
    }
};

// The PyTorch class of each case is the catalogue's trait (ScheduleInfo::pytorchClass): this test
// is what proves the trait names the class that runs the same order.
std::vector<PeerCase> cases()
{
    std::vector<PeerCase> out = {
        {"gpipe", 4, 8, 1, "loop", ""},
        {"gpipe", 3, 5, 1, "loop", ""},
        {"1f1b", 4, 8, 1, "loop", ""},
        {"1f1b", 8, 12, 1, "loop", ""},
        {"interleaved-1f1b", 4, 8, 2, "loop", ""},
        {"interleaved-1f1b", 2, 6, 3, "loop", ""},
        {"looped-bfs", 4, 8, 2, "loop", ""},
        {"looped-bfs", 3, 5, 3, "loop", ""},
        {"interleaved-zb", 4, 8, 2, "loop", ""},
        {"interleaved-zb", 2, 6, 3, "loop", ""},
        {"zb-v", 4, 8, 2, "v", ""},
        {"zb-v", 3, 4, 2, "v", ""},
        {"dualpipev", 4, 8, 2, "v", ""},
        {"dualpipev", 3, 10, 2, "v", ""},
    };
    for (auto& c : out) {
        const ScheduleInfo* info = findSchedule(c.name);
        c.torchClass = info ? info->pytorchClass : "";
    }
    return out;
}

std::string venvPython()
{
    return BS_PEER_PYTHON; // tests/CMakeLists.txt: the one path of the torch venv
}

Result<Schedule> make(const PeerCase& c)
{
    return makeSchedule({.name = c.name, .stages = c.p, .microbatches = c.m, .batches = 1, .stagesPerRank = c.v});
}

// PyTorch's CSV has no optimizer steps: one step() is one global batch.
Schedule computeOnly(Schedule schedule)
{
    for (auto& program : schedule.programs) {
        std::erase_if(program, [](const Action& a) { return a.kind == ActionKind::Update; });
    }
    return schedule;
}

struct PythonRun
{
    int status = -1;
    std::string output;
};

PythonRun runPython(const std::string& command)
{
    PythonRun run;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen((command + " 2>&1").c_str(), "r"), pclose);
    if (!pipe) {
        return run;
    }
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe.get())) {
        run.output += buffer;
    }
    const int raw = pclose(pipe.release());
    run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return run;
}

TEST(TorchPeer, ComputeOrderAndCsvBothWaysEqualPyTorchPipelining)
{
    const std::string python = venvPython();
    if (!std::filesystem::exists(python)) {
        GTEST_SKIP() << "no torch venv at " << python << " (packaging/install-torch.sh makes it)";
    }
    const auto dir = std::filesystem::temp_directory_path() / ("bs_torch_peer_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    std::string args;
    for (const auto& c : cases()) {
        auto schedule = make(c);
        ASSERT_TRUE(schedule) << c.arg() << ": " << schedule.error().describe();
        std::ofstream(dir / (c.file() + ".bubblescope.csv")) << scheduleToCsv(computeOnly(*schedule));
        args += " " + c.arg();
    }
    const PythonRun run = runPython(python + " " + BS_TORCH_PEER_SCRIPT + " " + dir.string() + args);
    if (run.status == 77) {
        std::filesystem::remove_all(dir);
        GTEST_SKIP() << run.output;
    }
    EXPECT_EQ(run.status, 0) << run.output;
    // The reverse: PyTorch's own CSVs (with its None padding as empty cells, and for the
    // multi-stage runtime also the form with its SEND/RECV actions) read by Bubblescope.
    for (const auto& c : cases()) {
        for (const char* suffix : {".torch.csv", ".torch_comms.csv"}) {
            const auto path = dir / (c.file() + suffix);
            if (std::string(suffix) == ".torch_comms.csv" && c.p * c.v == c.p) {
                continue; // single-stage schedules have no comms form
            }
            std::ifstream in(path);
            ASSERT_TRUE(in) << "PyTorch wrote no " << path;
            std::stringstream text;
            text << in.rdbuf();
            auto ours = make(c);
            ASSERT_TRUE(ours);
            auto theirs = scheduleFromCsv(text.str(), ours->params);
            if (c.name == "1f1b") {
                // torch 2.11 lists the last rank's forwards as F1..Fm (see torch_peer.py): its CSV
                // names one micro-batch too many, and Bubblescope refuses it with the reason.
                ASSERT_FALSE(theirs) << c.arg();
                EXPECT_NE(
                    theirs.error().message.find("micro-batches, not a multiple of microbatches"), std::string::npos)
                    << theirs.error().message;
                continue;
            }
            ASSERT_TRUE(theirs) << c.arg() << suffix << ": " << theirs.error().describe();
            EXPECT_EQ(computeOnly(*theirs).programs, computeOnly(*ours).programs) << c.arg() << suffix;
            EXPECT_EQ(theirs->rankOfStage, ours->rankOfStage) << c.arg();
            EXPECT_EQ(theirs->placement, ours->placement) << c.arg();
        }
    }
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace bs::runtime
