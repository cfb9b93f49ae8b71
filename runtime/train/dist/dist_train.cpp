#include "runtime/train/dist/dist_train.h"

#include "runtime/plan/rundir/run_dir_reader.h"
#include "runtime/plan/rundir/run_dir_writer.h"
#include "runtime/train/dist/gloo_transport.h"
#include "runtime/train/dist/rank_merge.h"
#include "runtime/train/exec/run_session.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

namespace bs::runtime {

namespace {

using Clock = std::chrono::steady_clock;
using profiler::TimeNs;

nlohmann::json eventsToJson(const profiler::TraceSnapshot& trace)
{
    nlohmann::json out = nlohmann::json::array();
    trace.forEach([&](const profiler::TraceEvent& e) {
        out.push_back({e.start, e.end, e.bytes, e.microbatch, e.version, e.stage, static_cast<int>(e.kind),
            static_cast<int>(e.lane), e.aux});
    });
    return out;
}

profiler::TraceEvent eventFromJson(const nlohmann::json& j)
{
    profiler::TraceEvent e;
    e.start = j.at(0).get<TimeNs>();
    e.end = j.at(1).get<TimeNs>();
    e.bytes = j.at(2).get<std::int64_t>();
    e.microbatch = j.at(3).get<std::int32_t>();
    e.version = j.at(4).get<std::int32_t>();
    e.stage = j.at(5).get<std::uint16_t>();
    e.kind = static_cast<profiler::EventKind>(j.at(6).get<int>());
    e.lane = static_cast<profiler::Lane>(j.at(7).get<int>());
    e.aux = j.at(8).get<std::uint16_t>();
    return e;
}

// Rank 0: one timeline and one summary from every rank's (rank_merge.h). Losses and validation
// come from the last stage (the only one that computes them); per-stage figures from the rank that
// ran it.
Result<nlohmann::json> mergeRanks(GlooTransport& net, const RunConfig& config, const DistRunOptions& options,
    double skewBoundUs, const std::string& backend)
{
    const int p = net.worldSize();
    std::vector<nlohmann::json> summaries;
    std::vector<RankPart> parts;
    std::vector<std::vector<nlohmann::json>> records; // each rank's metrics.jsonl records
    for (int k = 0; k < p; ++k) {
        auto s = net.fetch("bs/summary/" + std::to_string(k));
        auto t = net.fetch("bs/trace/" + std::to_string(k));
        auto m = net.fetch("bs/metrics/" + std::to_string(k));
        if (!s || !t || !m) {
            return (!s ? s : !t ? t : m).error();
        }
        auto log = parseMetricsJsonl(*m, "rank" + std::to_string(k) + "/metrics.jsonl");
        if (!log) {
            return log.error();
        }
        records.push_back(std::move(log->records));
        summaries.push_back(nlohmann::json::parse(*s));
        RankPart part;
        part.perStage = ownStages(config, k, summaries.back()["per_stage"]);
        part.wallTimeS = summaries.back().value("wall_time_s", 0.0);
        part.busyTimeS = summaries.back().value("busy_time_s", 0.0);
        part.noise = summaries.back().value("noise_scale", nlohmann::json());
        for (const nlohmann::json& e : nlohmann::json::parse(*t)) {
            part.events.push_back(eventFromJson(e));
        }
        parts.push_back(std::move(part));
    }
    // Losses and validation: from the rank of the last stage (rank 0 under a V placement).
    const std::vector<int> rankOf = rankOfStages(config);
    const auto lastRank = static_cast<std::size_t>(rankOf.empty() ? p - 1 : std::min(rankOf.back(), p - 1));
    MergedRun run = mergeRankParts(config, summaries[lastRank], std::move(parts), MergeLabels{backend, skewBoundUs});
    if (options.outDir) {
        // The merged records, as a stopped run's merge builds them (before, none: 0 bytes).
        const auto metrics = mergeMetricsRecords(config, records, std::numeric_limits<std::size_t>::max());
        if (Status s = writeMergedRun(*options.outDir, options.overwrite, config, run, metrics); !s) {
            return s.error();
        }
    }
    return run.summary;
}

} // namespace

Result<nlohmann::json> trainDistributed(const RunConfig& config, const DistEnv& env, const DistRunOptions& options)
{
    if (Status s = checkDistEnv(env, config); !s) {
        return s.error();
    }
    auto backend = distBackend(options.backend, config);
    if (!backend) {
        return backend.error();
    }
    RunConfig rankConfig = config;
    rankConfig.device.name = rankDevice(env, config); // one GPU per rank
    GlooOptions gloo;
    gloo.timeout = options.timeout;
    gloo.rendezvousTimeout = options.timeout;
    gloo.nccl = *backend == "nccl";
    gloo.identity = runIdentity(env, config, *backend); // ranks with other settings are named at once
    gloo.cudaDevice = parseDeviceName(rankConfig.device.name).index;
    auto connected = GlooTransport::connect(env, gloo);
    if (!connected) {
        return connected.error();
    }
    std::shared_ptr<GlooTransport> net = *connected;
    auto fail = [&](Error e) -> Result<nlohmann::json> {
        net->reportFailure(e.describe());
        // Gloo's destructor waits for work still pending on a dead peer: keep the transport alive
        // so that returning never blocks; the failing process exits right after (the CLI _exits).
        new std::shared_ptr<GlooTransport>(net); // NOLINT: deliberate leak on the failure path
        net->leaveRendezvous(); // the transport's end never comes: its rendezvous directory goes now
        return e;
    };
    if (Status s = net->barrier(); !s) {
        return fail(s.error());
    }
    const Clock::time_point zero = Clock::now();
    // Bound on the clock skew: a store round trip right after the barrier (the release spread is
    // at most about one one-way latency).
    const std::string pingKey = "bs/ping/" + std::to_string(env.rank);
    const auto t0 = Clock::now();
    (void)net->publish(pingKey, "1");
    (void)net->fetch(pingKey);
    const double skewBoundUs = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / 2.0;

    SessionOptions so;
    so.transport = net;
    so.clockZero = zero;
    so.overwrite = options.overwrite;
    if (options.outDir) {
        so.outDir = *options.outDir / ("rank" + std::to_string(env.rank));
    }
    auto session = RunSession::create(rankConfig, so);
    if (!session) {
        return fail(session.error());
    }
    const Status ran = session->run();
    if (!ran) {
        return fail(ran.error());
    }
    const nlohmann::json own = session->summary();
    if (Status s = net->publish("bs/trace/" + std::to_string(env.rank), eventsToJson(*session->trace()).dump()); !s) {
        return fail(s.error());
    }
    if (Status s = net->publish("bs/summary/" + std::to_string(env.rank), own.dump()); !s) {
        return fail(s.error());
    }
    // Its metrics records, for rank 0's merged metrics.jsonl (its own file: every rank writes one
    // when the run has a directory; none without).
    std::string records;
    if (so.outDir) {
        std::ifstream in(*so.outDir / kMetricsFileName, std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        records = text.str();
    }
    if (Status s = net->publish("bs/metrics/" + std::to_string(env.rank), records); !s) {
        return fail(s.error());
    }
    if (env.rank != 0) {
        // Only the last stage computes the loss: the pipeline's comes back from rank 0's merge, so
        // every rank reports the run's final loss (it said nan on the stages without the head).
        auto merged = net->fetch("bs/merged_summary");
        if (!merged) {
            return fail(merged.error());
        }
        nlohmann::json withLoss = own;
        const nlohmann::json pipeline = nlohmann::json::parse(*merged, nullptr, false);
        if (pipeline.is_object() && pipeline.contains("final_train_loss")) {
            withLoss["final_train_loss"] = pipeline["final_train_loss"];
            withLoss["losses"] = pipeline.value("losses", nlohmann::json::array());
        }
        // Rank 0 hosts the store: stay until it has gathered everything.
        if (Status s = net->barrier(); !s) {
            return fail(s.error());
        }
        return withLoss;
    }
    auto merged = mergeRanks(*net, config, options, skewBoundUs, *backend);
    if (!merged) {
        return fail(merged.error());
    }
    if (Status s = net->publish("bs/merged_summary", merged->dump()); !s) {
        return fail(s.error());
    }
    if (Status s = net->barrier(); !s) {
        return fail(s.error());
    }
    return merged;
}

} // namespace bs::runtime
