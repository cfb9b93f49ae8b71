#include "app/cli/analyze_command.h"

#include "app/cli/cli_common.h"
#include "app/cli/imported_what_if.h"
#include "app/cli/table.h"
#include "base/atomic_file.h"
#include "profiler/import/attribution_export.h"
#include "profiler/import/measured_bubbles.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

namespace bs::cli {

namespace {

using namespace profiler::kineto;

std::string ms(TimeNs t) { return fixed(static_cast<double>(t) / 1e6, 3); }

struct AnalyzeCommand
{
    std::vector<std::string> traces;
    bool json = false;
    std::string perfetto;
    std::vector<std::string> whatIf; ///< SCHEDULE or SCHEDULE:M

    /// The job's own schedule first (left out, with `ownMissing` saying why, when the catalogue
    /// has none of its class), then each --what-if.
    Result<std::vector<WhatIf>> predictions(const ImportedJob& job, std::string& ownMissing) const
    {
        std::vector<WhatIf> out;
        if (auto own = predictFromImportedJob(job)) {
            out.push_back(*own);
        } else {
            ownMissing = own.error().describe();
        }
        for (const std::string& spec : whatIf) {
            const std::size_t colon = spec.find(':');
            int m = 0;
            if (colon != std::string::npos) {
                // Digits only: "1e3" once read as m = 1 and "8:8" as m = 8.
                const std::string digits = spec.substr(colon + 1);
                const bool plain = !digits.empty() && digits.size() <= 5
                    && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
                m = plain ? std::stoi(digits) : -1;
                if (m < 1 || m > 65536) {
                    return makeError(ErrorCode::InvalidArgument,
                        "--what-if " + spec + ": micro-batches after ':' must be an integer",
                        "allowed: SCHEDULE or SCHEDULE:M with M in 1..65536");
                }
            }
            auto p = predictFromImportedJob(job, spec.substr(0, colon), m);
            if (!p) {
                return p.error();
            }
            out.push_back(*p);
        }
        return out;
    }

    int run() const
    {
        auto imported = importKinetoJob(traces);
        if (!imported) {
            return reportError(imported.error());
        }
        for (const std::string& warning : imported->warnings) {
            std::cerr << "warning: " << warning << "; give every rank's trace (a folder of them)\n";
        }
        // A profile of several steps: each step is measured on its own, and the figures below and
        // the what-ifs are the median step's (profiler/import, medianStep).
        const ImportedJob* job = &medianStep(*imported);
        std::vector<StepFigures> steps;
        for (const ImportedJob& step : imported->steps) {
            const JobBubbles b = measureBubbles(step);
            steps.push_back({step.profilerStep, step.microbatches, b.makespan, b.bubbleFraction, &step == job});
        }
        const JobBubbles bubbles = measureBubbles(*job);
        std::string ownMissing;
        auto predicted = predictions(*job, ownMissing);
        if (!predicted) {
            return reportError(predicted.error());
        }
        if (!perfetto.empty()) {
            // The whole profile, every step of it, as it ran.
            const JobBubbles whole = job == &*imported ? JobBubbles{} : measureBubbles(*imported);
            auto status = writeFileAtomic(perfetto, [&](std::ostream& out) {
                return writeAttributionTrace(out, *imported, job == &*imported ? bubbles : whole);
            });
            if (!status) {
                return reportError(status.error());
            }
            std::cerr << "wrote " << perfetto << " (Perfetto / chrome://tracing)\n";
        }
        auto replay = replayImportedJob(*job); // Unavailable when no schedule of the catalogue is the job's: absent
        const Replay* replayed = replay ? &replay.value() : nullptr;
        json ? printJson(*job, bubbles, *predicted, replayed, steps)
             : printTable(*job, bubbles, *predicted, replayed, ownMissing, steps);
        return kExitOk;
    }

    struct StepFigures
    {
        int number = 0; ///< N of ProfilerStep#N
        int microbatches = 0;
        TimeNs makespan = 0;
        double bubble = 0;
        bool calibrates = false; ///< the median step: the figures and what-ifs are its
    };

    template<typename T>
    static T median(std::vector<T> values)
    {
        std::sort(values.begin(), values.end());
        const std::size_t n = values.size();
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    }

    static void printSteps(const std::vector<StepFigures>& steps)
    {
        if (steps.empty()) {
            return;
        }
        Table t({"profiler step", "m", "step ms", "bubble"});
        std::vector<TimeNs> times;
        std::vector<double> bubbles;
        int calibrates = 0;
        for (const StepFigures& s : steps) {
            t.addRow({"ProfilerStep#" + std::to_string(s.number), std::to_string(s.microbatches), ms(s.makespan),
                percent(s.bubble)});
            times.push_back(s.makespan);
            bubbles.push_back(s.bubble);
            calibrates = s.calibrates ? s.number : calibrates;
        }
        t.addRow({"median", "", ms(median(times)), percent(median(bubbles))});
        std::printf("%zu profiled steps, each analysed on its own:\n", steps.size());
        std::cout << t.render();
        std::printf("below: ProfilerStep#%d, the median step time; the what-ifs calibrate from it\n\n", calibrates);
    }

    static void printTable(const ImportedJob& job, const JobBubbles& b, const std::vector<WhatIf>& predicted,
        const Replay* replayed, const std::string& ownMissing, const std::vector<StepFigures>& steps)
    {
        printSteps(steps);
        const std::string ours = replayed ? " (Bubblescope's " + replayed->schedule + ")" : "";
        std::printf("%s job%s, %zu ranks, %d stages, m = %d, backend %s, pipeline group %s\n",
            job.pytorchSchedule.empty() ? "unrecognised" : job.pytorchSchedule.c_str(), ours.c_str(), job.ranks.size(),
            job.stages, job.microbatches, job.backend.empty() ? "?" : job.backend.c_str(), job.pipelineGroup.c_str());
        std::printf("step %s ms measured, bubble %s; %zu transfers matched, %zu unmatched\n\n", ms(b.makespan).c_str(),
                    percent(b.bubbleFraction).c_str(), job.transfers.size(), job.unmatchedComms);
        Table t({"rank", "stages", "actions from", "busy ms", "bubble", "warm-up", "drain", "flush", "dependency", "comm",
                 "recv transfer", "recv wait", "send transfer", "send wait"});
        for (std::size_t i = 0; i < b.ranks.size(); ++i) {
            const RankBubbles& r = b.ranks[i];
            std::string stages;
            for (int s : r.stages) {
                stages += (stages.empty() ? "" : ",") + std::to_string(s);
            }
            auto cause = [&](profiler::BubbleCause c) { return ms(r.idleByCause[static_cast<std::size_t>(c)]); };
            t.addRow({std::to_string(job.ranks[i].globalRank), stages, std::string(labelSourceName(job.ranks[i].source)), ms(r.busy),
                      percent(r.bubbleFraction), cause(profiler::BubbleCause::WarmUp), cause(profiler::BubbleCause::Drain),
                      cause(profiler::BubbleCause::Flush), cause(profiler::BubbleCause::Dependency), cause(profiler::BubbleCause::Comm),
                      ms(r.recvTransfer), ms(r.recvWaiting), ms(r.sendTransfer), ms(r.sendWaiting)});
        }
        std::cout << t.render() << "(idle by cause in ms; waits = time a send/recv was posted before its peer's)\n\n";
        if (!ownMissing.empty()) {
            std::printf("no what-if of the job's own schedule: %s\n", ownMissing.c_str());
        }
        if (predicted.empty()) {
            return;
        }
        Table w({"what-if (calibrated from this job)", "m", "step ms", "bubble"});
        for (std::size_t i = 0; i < predicted.size(); ++i) {
            const WhatIf& p = predicted[i];
            w.addRow({p.own ? p.schedule + " (this job's own)" : p.schedule, std::to_string(p.microbatches),
                ms(p.predictedStep), percent(p.predictedBubble)});
        }
        std::cout << w.render();
        const double err = b.makespan > 0 ? static_cast<double>(predicted.front().predictedStep - b.makespan) / static_cast<double>(b.makespan) : 0;
        if (predicted.front().own) {
            std::printf("own-schedule prediction vs measured step: %+.1f %%\n", err * 100.0);
        }
        if (replayed) {
            std::printf("Bubblescope's %s with these measured durations and hop delays: step %s ms, bubble %s "
                        "(measured %s); %s\n",
                replayed->schedule.c_str(), ms(replayed->report.makespan).c_str(),
                percent(replayed->report.bubbleFraction).c_str(), percent(b.bubbleFraction).c_str(),
                replayed->orderMatches ? "each rank's order is the trace's"
                                       : ("its order differs from the trace's at " + replayed->difference).c_str());
        }
    }

    static void printJson(const ImportedJob& job, const JobBubbles& b, const std::vector<WhatIf>& predicted,
        const Replay* replayed, const std::vector<StepFigures>& steps)
    {
        nlohmann::json out;
        if (!steps.empty()) { // the fields below are then the median step's (profiler_step)
            nlohmann::json list = nlohmann::json::array();
            std::vector<TimeNs> times;
            std::vector<double> bubbles;
            for (const StepFigures& s : steps) {
                list.push_back({{"profiler_step", s.number}, {"microbatches", s.microbatches}, {"step_ns", s.makespan},
                    {"bubble_fraction", s.bubble}});
                times.push_back(s.makespan);
                bubbles.push_back(s.bubble);
            }
            out["profiler_steps"] = list;
            out["median"] = {{"step_ns", median(times)}, {"bubble_fraction", median(bubbles)}};
            out["profiler_step"] = job.profilerStep; // the median step time's: figures and what-ifs are its
        }
        out["schedule"] = job.pytorchSchedule; // PyTorch's class; the replay names Bubblescope's schedule
        out["stages"] = job.stages;
        out["microbatches"] = job.microbatches;
        out["backend"] = job.backend;
        out["pipeline_group"] = job.pipelineGroup;
        out["step_ns"] = b.makespan;
        out["bubble_fraction"] = b.bubbleFraction;
        out["transfers"] = job.transfers.size();
        out["unmatched_comms"] = job.unmatchedComms;
        out["warnings"] = job.warnings;
        nlohmann::json ranks = nlohmann::json::array();
        for (std::size_t i = 0; i < b.ranks.size(); ++i) {
            const RankBubbles& r = b.ranks[i];
            nlohmann::json idle;
            for (int c = 0; c < profiler::kBubbleCauseCount; ++c) {
                idle[std::string(profiler::bubbleCauseName(static_cast<profiler::BubbleCause>(c)))] = r.idleByCause[static_cast<std::size_t>(c)];
            }
            ranks.push_back({{"rank", job.ranks[i].globalRank}, {"pipeline_rank", r.rank}, {"file", job.ranks[i].file},
                {"stages", r.stages}, {"actions_from", std::string(labelSourceName(job.ranks[i].source))},
                {"gpu", job.ranks[i].gpu}, {"clock_shift_ns", job.ranks[i].clockShift}, {"busy_ns", r.busy},
                {"idle_ns", r.idle}, {"bubble_fraction", r.bubbleFraction}, {"idle_by_cause_ns", idle},
                {"recv_transfer_ns", r.recvTransfer}, {"recv_wait_ns", r.recvWaiting},
                {"send_transfer_ns", r.sendTransfer}, {"send_wait_ns", r.sendWaiting}});
        }
        out["ranks"] = ranks;
        nlohmann::json transfers = nlohmann::json::array();
        for (const Transfer& t : job.transfers) {
            nlohmann::json one = {{"from_rank", job.ranks[static_cast<std::size_t>(t.srcRank)].globalRank},
                                  {"to_rank", job.ranks[static_cast<std::size_t>(t.dstRank)].globalRank},
                                  {"from_stage", t.srcStage},
                                  {"to_stage", t.dstStage},
                                  {"microbatch", t.microbatch},
                                  {"what", t.direction == Direction::Activation ? "activation" : "gradient"},
                                  {"bytes", t.bytes},
                                  {"recv_wait_ns", t.recvWaiting()},
                                  {"send_wait_ns", t.sendWaiting()},
                                  {"transfer_ns", t.transferTime()}};
            if (t.comm >= 0) {
                const CommInfo& c = job.comms[static_cast<std::size_t>(t.comm)];
                one["nccl"] = {{"collective", c.collective}, {"dtype", c.dtype},
                    {"elements", std::max(c.inElements, c.outElements)}, {"process_group", c.processGroup},
                    {"process_group_desc", c.processGroupDesc}, {"process_group_ranks", c.processGroupRanks},
                    {"src_rank", c.srcRank}, {"dst_rank", c.dstRank}, {"seq", c.seq}};
            }
            transfers.push_back(std::move(one));
        }
        out["transfer_list"] = transfers;
        nlohmann::json whatIfs = nlohmann::json::array();
        for (const WhatIf& p : predicted) {
            whatIfs.push_back({{"schedule", p.schedule}, {"microbatches", p.microbatches}, {"step_ns", p.predictedStep},
                {"bubble_fraction", p.predictedBubble}, {"own", p.own}});
        }
        out["what_if"] = whatIfs;
        if (replayed) {
            out["replay"] = {{"schedule", replayed->schedule}, {"step_ns", replayed->report.makespan},
                {"bubble_fraction", replayed->report.bubbleFraction}, {"order_matches", replayed->orderMatches}};
            if (!replayed->orderMatches) {
                out["replay"]["order_difference"] = replayed->difference;
            }
        }
        std::cout << out.dump(1) << "\n";
    }
};

} // namespace

void addAnalyzeCommand(CLI::App& app, int& exitCode)
{
    auto cmd = std::make_shared<AnalyzeCommand>();
    auto* sub = app.add_subcommand("analyze",
                                   "Measured bubbles of your own pipeline job from torch.profiler traces of every rank "
                                   "(files or a folder; .json or .json.gz)");
    sub->add_option("traces", cmd->traces, "Kineto trace files, or folders of them (one per rank)")->required();
    sub->add_flag("--json", cmd->json, "Print JSON instead of tables");
    sub->add_option("--perfetto", cmd->perfetto, "Also write the attribution (actions, bubbles, waits, transfers) as a Perfetto trace");
    sub->add_option("--what-if", cmd->whatIf,
                    "Also predict SCHEDULE (e.g. zb-h1, paci, gpipe:16 for another m) from this job's measured costs; repeatable");
    sub->callback([cmd, &exitCode] {
        try {
            exitCode = cmd->run();
        } catch (const std::exception& e) { // out of memory in the analysis of a huge job
            exitCode = reportError(makeError(ErrorCode::Internal, std::string("analyze failed: ") + e.what()));
        }
    });
}

} // namespace bs::cli
