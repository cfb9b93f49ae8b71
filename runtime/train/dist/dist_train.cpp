#include "runtime/train/dist/dist_train.h"

#include "runtime/train/dist/gloo_transport.h"
#include "runtime/train/dist/rank_merge.h"
#include "runtime/train/exec/run_session.h"

#include <algorithm>

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
    for (int k = 0; k < p; ++k) {
        auto s = net.fetch("bs/summary/" + std::to_string(k));
        auto t = net.fetch("bs/trace/" + std::to_string(k));
        if (!s || !t) {
            return (!s ? s : t).error();
        }
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
        if (Status s = writeMergedRun(*options.outDir, options.overwrite, config, run, {}); !s) {
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
    if (env.rank != 0) {
        // Rank 0 hosts the store: stay until it has gathered everything.
        if (Status s = net->barrier(); !s) {
            return fail(s.error());
        }
        return own;
    }
    auto merged = mergeRanks(*net, config, options, skewBoundUs, *backend);
    if (!merged) {
        return fail(merged.error());
    }
    if (Status s = net->barrier(); !s) {
        return fail(s.error());
    }
    return merged;
}

} // namespace bs::runtime
