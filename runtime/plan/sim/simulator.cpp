#include "runtime/plan/sim/simulator.h"

#include "profiler/analysis/analyze.h"
#include "profiler/analysis/first_pass.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/validate.h"
#include "runtime/plan/sim/cost_model_executor.h"
#include "runtime/plan/sim/scheduler_core.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

namespace bs::runtime {

profiler::AnalysisOptions analysisOptionsFor(const Schedule& schedule, const CostModel* model,
                                             std::vector<profiler::AnalysisOptions::Segment> laterSettings)
{
    profiler::AnalysisOptions options;
    options.microbatchesPerBatch = schedule.params.microbatches;
    options.synchronous = !schedule.asynchronous;
    options.stashesWeights = schedule.weights == WeightPolicy::Stash || schedule.weights == WeightPolicy::TwoVersions;
    options.laterSettings = std::move(laterSettings);
    if (!model) {
        return options;
    }
    const CostModel& costs = *model;
    if (costs.stages.size() == static_cast<std::size_t>(schedule.stages()) && !schedule.onePerRank()) {
        // The trace has one lane per rank: a rank holds the weights of all its chunks.
        const auto ranks = static_cast<std::size_t>(schedule.ranks());
        options.staticBytes.assign(ranks, 0);
        options.paramBytes.assign(ranks, 0);
        options.activationBytes.assign(ranks, 1);
        for (int s = 0; s < schedule.stages(); ++s) {
            const StageCost& cost = costs.stages[static_cast<std::size_t>(s)];
            const auto r = static_cast<std::size_t>(schedule.rankOf(s));
            options.staticBytes[r] += costs.bytesKnown ? 4 * cost.paramBytes : 0;
            options.paramBytes[r] += costs.bytesKnown ? cost.paramBytes : 0;
            options.activationBytes[r] = costs.bytesKnown ? cost.activationBytes : 1;
        }
        return options;
    }
    for (const StageCost& cost : costs.stages) {
        // Parameters, gradients and AdamW's two moments: four copies of the weights.
        // Recompute: the one micro-batch being recomputed holds its full activations on top.
        options.staticBytes.push_back(costs.bytesKnown ? 4 * cost.paramBytes + cost.recomputeBytes : 0);
        options.paramBytes.push_back(costs.bytesKnown ? cost.paramBytes : 0);
        options.activationBytes.push_back(costs.bytesKnown ? cost.activationBytes : 1);
    }
    return options;
}

profiler::TraceMeta traceMetaFor(const Schedule& schedule)
{
    profiler::TraceMeta meta;
    meta.stages = schedule.ranks(); // one timeline lane per rank, whatever it holds
    meta.clock = "virtual";
    const auto& p = schedule.params;
    meta.title = p.name + " p=" + std::to_string(p.stages) + " m=" + std::to_string(p.microbatches)
                 + (findSchedule(p.name) && findSchedule(p.name)->takesAccumWindow() ? " a=" + std::to_string(p.accum) : "")
                 + (schedule.onePerRank() ? "" : " v=" + std::to_string(schedule.stagesPerRank()));
    if (!schedule.onePerRank()) {
        meta.stagesPerLane = schedule.stagesPerRank();
        meta.attributes["placement"] = std::string(placementName(schedule.placement));
    }
    meta.attributes["schedule"] = p.name;
    meta.attributes["stages"] = std::to_string(p.stages);
    meta.attributes["microbatches"] = std::to_string(p.microbatches);
    meta.attributes["accum"] = std::to_string(p.accum);
    meta.attributes["batches"] = std::to_string(p.batches);
    meta.attributes["weights"] = std::string(weightPolicyName(schedule.weights));
    return meta;
}

namespace {

StageCost chunkCost(const StageCost& rank, int v)
{
    StageCost c = rank;
    c.forward /= v;
    c.backwardInput /= v;
    c.backwardWeight /= v;
    c.update /= v;
    c.forwardBackward /= v;
    c.cold.forward /= v; // each chunk's first actions pay its share of the rank's start-up
    c.cold.backwardInput /= v;
    c.cold.backwardWeight /= v;
    c.cold.update /= v;
    c.activationBytes = std::max<std::int64_t>(1, rank.activationBytes / v);
    c.paramBytes /= v; // sendBytes stays: the hidden state between chunks is the same size
    return c;
}

Result<CostModel> costsPerStage(const Schedule& schedule, CostModel costs)
{
    const auto stages = static_cast<std::size_t>(schedule.stages());
    const auto ranks = static_cast<std::size_t>(schedule.ranks());
    const int v = schedule.stagesPerRank();
    if (costs.stages.size() == stages && (v == 1 || stages != ranks)) {
        return costs; // one cost per stage (chunk)
    }
    if (costs.stages.size() == 1 || costs.stages.size() == ranks) {
        // A cost per rank (or one for all): a rank's layers split evenly over its v chunks.
        std::vector<StageCost> perStage(stages);
        for (std::size_t s = 0; s < stages; ++s) {
            const StageCost& rank = costs.stages[costs.stages.size() == 1 ? 0 : static_cast<std::size_t>(schedule.rankOf(static_cast<int>(s)))];
            perStage[s] = v == 1 ? rank : chunkCost(rank, v);
        }
        costs.stages = std::move(perStage);
        return costs;
    }
    return makeError(ErrorCode::InvalidArgument,
                     "cost model has " + std::to_string(costs.stages.size()) + " stages, schedule has "
                         + std::to_string(ranks) + " ranks of " + std::to_string(v) + " stages",
                     "give one cost per rank, one per stage, or a single cost for all");
}

} // namespace

namespace {

// Below this many actions validation (~8 ns an action) costs less than starting and joining a
// thread (~50 µs here): the tuner's and Suggest's many small simulations validate inline.
constexpr std::size_t kValidateBesideActions = 16'384;

// The work that runs beside the drive, on a thread of its own started at construction: first
// validate(schedule) (it only reads the schedule, as the drive does; one walk of the programs for
// a legal schedule, the deadlock replay with every rule fed from it), then the facts of the
// analysis's first walk of the trace (profiler::FirstPass::addFacts()), right behind the
// scheduler core as it writes the events where validation ends first, while the caller takes the
// lanes' memory after the drive. Inline validation and no first walk for a small schedule or
// where no thread can be started.
//
// Caught up with the drive, the thread sleeps (50 µs) rather than spin: a simulation should not
// keep a core busy doing nothing (a laptop, a VM whose host is busy). When the drive ends the
// caller never waits for it to wake: it takes the rest of the walk over from a sleeping thread,
// or the whole walk from one still validating (an atomic hand-over, `m_walk`), and waits only
// for a thread that is running.
class BesideTheDrive
{
public:
    explicit BesideTheDrive(const Schedule& schedule)
        : m_schedule(schedule)
    {
        if (schedule.actionCount() < kValidateBesideActions) {
            m_status = validate(m_schedule);
            return;
        }
        try {
            m_thread = std::thread([this] { run(); });
        } catch (const std::system_error&) {
            m_status = validate(m_schedule);
        }
    }
    ~BesideTheDrive() { verdict(); }
    /// Whether validation runs on a thread of its own (which can then take a first walk).
    bool threaded() const { return m_thread.joinable(); }
    BesideTheDrive(const BesideTheDrive&) = delete;
    BesideTheDrive& operator=(const BesideTheDrive&) = delete;

    /// Before the drive: the thread, once it has validated, takes the facts of `pass`'s walk over
    /// `store`'s events (FirstPass::addFacts()) as the drive writes them; driveEnded() adds the
    /// lanes' memory (addMemory()). Both must outlive driveEnded() or stopFollowing().
    void follow(const profiler::TraceStore& store, profiler::FirstPass& pass)
    {
        if (!m_thread.joinable()) {
            return; // inline: analyze() walks the trace itself
        }
        {
            std::lock_guard lock(m_mutex);
            m_store = &store;
            m_pass = &pass;
        }
        m_wake.notify_one();
    }
    /// After the drive: nothing more will be appended. The first walk over every event the store
    /// holds, or null where none was taken (analyze() then walks the trace itself).
    ///
    /// The walk is split by what it tracks: the thread takes the facts as it follows the drive,
    /// and this (the caller's) thread every lane's memory once the drive has ended, while the
    /// thread finishes the facts; then the facts the thread has not walked, from where it sleeps
    /// or, if it still validates, all of them. Never a third thread (analyze() would start one for
    /// a walk it takes itself): with the thread validating on, both cores are busy already.
    profiler::FirstPass* driveEnded()
    {
        endDrive();
        if (!m_thread.joinable() || m_store == nullptr) {
            return nullptr; // m_store is this (the caller's) thread's own write, in follow()
        }
        walkPublished(*m_store, 0, &profiler::FirstPass::addMemory); // everything is published
        switch (stopWalk()) {
        case kDone:
            return m_pass;
        case kValidating:
            walkPublished(*m_store, 0, &profiler::FirstPass::addFacts);
            return m_pass;
        case kSleeping:
            walkPublished(*m_store, m_next.load(std::memory_order_relaxed), &profiler::FirstPass::addFacts);
            return m_pass;
        default:
            return nullptr; // given up
        }
    }
    /// On every way out of the drive, an exception's too: the thread stops reading the store and
    /// what the walk was made from before they go (after driveEnded(), at once).
    void stopFollowing() noexcept
    {
        endDrive();
        if (m_thread.joinable() && m_store != nullptr) {
            stopWalk();
        }
    }
    /// Waits for the thread (nothing more will be appended): the schedule's validation.
    const Status& verdict()
    {
        endDrive();
        if (m_thread.joinable()) {
            m_thread.join();
        }
        return m_status;
    }

private:
    enum Walk : int
    {
        kValidating, // not walking yet
        kWalking, // the thread's
        kSleeping, // the thread's, caught up and asleep; the caller may take it over
        kTaken, // the caller's
        kDone, // walked to the end by the thread
        kGivenUp, // the thread could not make the walk (out of memory): analyze() walks
    };

    // Ends the thread's part in the walk: waits while it is walking (it is running, and done in a
    // moment), takes the walk from a thread still validating or asleep. Returns the state it found.
    int stopWalk() noexcept
    {
        for (;;) {
            int walk = m_walk.load(std::memory_order_acquire);
            if (walk == kDone || walk == kTaken || walk == kGivenUp) {
                return walk;
            }
            if ((walk == kValidating || walk == kSleeping)
                && m_walk.compare_exchange_strong(walk, kTaken, std::memory_order_acq_rel)) {
                return walk;
            }
            std::this_thread::yield();
        }
    }
    void endDrive()
    {
        {
            std::lock_guard lock(m_mutex);
            m_driveEnded.store(true, std::memory_order_release);
        }
        m_wake.notify_one();
    }
    void run()
    {
        m_status = validate(m_schedule);
        const profiler::TraceStore* store = nullptr;
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_store != nullptr || m_driveEnded.load(std::memory_order_relaxed); });
            store = m_store;
        }
        int walk = kValidating;
        if (!store || !m_walk.compare_exchange_strong(walk, kWalking, std::memory_order_acq_rel)) {
            return; // no trace to follow, or the caller took the walk before it began
        }
        try {
            followStore(*store);
        } catch (const std::bad_alloc&) {
            m_walk.store(kGivenUp, std::memory_order_release); // only this thread leaves kWalking
        }
    }
    // Walks what the drive publishes (every DriveOptions::appendBatch events) until it ends, or
    // until the caller takes the walk over while this thread sleeps.
    void followStore(const profiler::TraceStore& store)
    {
        std::size_t next = 0;
        for (;;) {
            const bool ended = m_driveEnded.load(std::memory_order_acquire);
            next = walkPublished(store, next, &profiler::FirstPass::addFacts, true);
            // Once noted, stays noted for this drive; walkPublished() may have stopped short for it.
            const bool replays = store.repeatNoted();
            if (ended && !replays) {
                m_walk.store(kDone, std::memory_order_release);
                return;
            }
            // Only this thread leaves kWalking, so a plain store; it publishes m_next and the walk.
            m_next.store(next, std::memory_order_relaxed);
            m_walk.store(kSleeping, std::memory_order_release);
            if (replays) {
                // The drive replays: the analysis will most likely take the copies in one step
                // and need no walk (profiler::takesCopiesInOneStep). The walk stays asleep
                // where it is; the caller takes it up from there if the analysis wants it after
                // all (a walk it stopped short is not one walked to the end: never kDone).
                return;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            int walk = kSleeping;
            if (!m_walk.compare_exchange_strong(walk, kWalking, std::memory_order_acq_rel)) {
                return; // the caller took the walk over
            }
        }
    }
    // Adds the events published from `next` on to the walk's facts or memory (`part`); returns
    // where it stopped: at the end of what is published, or (`untilRepeat`) once the drive has
    // said it replays (the replay writes its copies faster than this walk reads them).
    std::size_t walkPublished(const profiler::TraceStore& store, std::size_t next,
        void (profiler::FirstPass::*part)(const profiler::TraceEvent*, std::size_t), bool untilRepeat = false)
    {
        constexpr std::size_t kBetweenLooks = 8'192; // events walked between two looks at the store
        std::shared_ptr<const profiler::TraceChunk> chunk;
        std::size_t count = 0;
        while (const profiler::TraceEvent* events = store.published(next, count, chunk)) {
            if (untilRepeat && store.repeatNoted()) {
                break;
            }
            count = untilRepeat ? std::min(count, kBetweenLooks) : count;
            ((*m_pass).*part)(events, count);
            next += count;
        }
        return next;
    }

    const Schedule& m_schedule;
    Status m_status = ok();
    std::mutex m_mutex;
    std::condition_variable m_wake;
    const profiler::TraceStore* m_store = nullptr; // set before the drive, under m_mutex
    profiler::FirstPass* m_pass = nullptr; // set with m_store; its facts the thread's until kSleeping or kDone
    std::atomic<bool> m_driveEnded{false};
    std::atomic<int> m_walk{kValidating};
    std::atomic<std::size_t> m_next{0}; // where a sleeping walk stopped
    std::thread m_thread;
};

// The simulation of `schedule` (which the caller keeps): drive and analyse. The scheduler core
// checks each action's stage and micro-batch before it indexes by them (an action that names
// one out of bounds ends the drive with checkIndices()'s error). `beside`, when given, takes the
// analysis's first walk as the drive writes the trace.
Result<SimulationResult> simulateOn(
    const Schedule& schedule, CostModel input, int microBatchSize, BesideTheDrive* beside = nullptr)
{
    auto perStage = costsPerStage(schedule, std::move(input));
    if (!perStage) {
        return perStage.error();
    }
    CostModel costs = std::move(*perStage);
    if (microBatchSize < 1) {
        return makeError(ErrorCode::InvalidArgument, "micro-batch-size must be at least 1", "micro-batch-size: >= 1");
    }
    profiler::TraceStore store(traceMetaFor(schedule));
    const profiler::AnalysisOptions analysisOptions = analysisOptionsFor(schedule, &costs);
    // Micro-batch ids run over [0, totalMicrobatches) and updates count up from 0 per stage.
    std::optional<profiler::FirstPass> firstPassOfBeside;
    if (beside && beside->threaded()) {
        firstPassOfBeside.emplace(
            analysisOptions, schedule.ranks(), std::max(0, schedule.totalMicrobatches() - 1), schedule.stagesPerRank());
    }
    // Destroyed before the store and the options: the thread beside never reads them after.
    const struct StopFollowingOnExit
    {
        BesideTheDrive* beside;
        ~StopFollowingOnExit()
        {
            if (beside) {
                beside->stopFollowing();
            }
        }
    } stopFollowing{beside};
    if (firstPassOfBeside) {
        beside->follow(store, *firstPassOfBeside);
    }
    CostModelExecutor executor(costs);
    DriveOptions options;
    options.appendBatch = 1024; // nobody but `beside` reads the store before drive() returns
    auto stats = drive(schedule, executor, store, options);
    if (!stats) {
        return stats.error();
    }
    SimulationResult result;
    result.trace = store.snapshot();
    // A trace whose copies the analysis takes in one step needs no walk beside the drive (the
    // lanes' memory the caller would add now was a third of the time after the drive).
    profiler::FirstPass* firstPass = nullptr;
    if (beside && profiler::takesCopiesInOneStep(*result.trace, analysisOptions)) {
        beside->stopFollowing();
        firstPassOfBeside.reset(); // its tables recycled into the analysis's own
    } else if (beside) {
        firstPass = beside->driveEnded();
    }
    result.report = profiler::analyze(*result.trace, analysisOptions, firstPass);
    const double seconds = toSeconds(result.report.makespan);
    if (seconds > 0) {
        result.throughputSamplesPerSecond =
            static_cast<double>(schedule.totalMicrobatches()) * microBatchSize / seconds;
    }
    return result;
}

} // namespace

Result<SimulationResult> simulateSchedule(Schedule schedule, CostModel costs, int microBatchSize)
{
    auto result = simulateOn(schedule, std::move(costs), microBatchSize);
    if (result) {
        result->schedule = std::move(schedule);
    }
    return result;
}

namespace {

// simulate()'s own path: a schedule the catalogue generated, validated beside its simulation;
// nothing of the simulation is returned before the verdict.
Result<SimulationResult> simulateGenerated(Schedule schedule, CostModel costs, int microBatchSize)
{
    Result<SimulationResult> result = makeError(ErrorCode::Internal, "not simulated");
    {
        BesideTheDrive validation(schedule);
        result = simulateOn(schedule, std::move(costs), microBatchSize, &validation);
        // validate() rejects whatever the scheduler core found out of bounds, so no misfit's
        // error is returned unexplained.
        if (const Status& valid = validation.verdict(); !valid) {
            return generatedScheduleInvalid(schedule, valid.error());
        }
    }
    if (result) {
        result->schedule = std::move(schedule);
    }
    return result;
}

} // namespace

Result<SimulationResult> simulate(const SimulationRequest& request)
{
    ScheduleParams params = request.schedule;
    if (params.commRatio == 0.0 && !request.costs.stages.empty()) {
        // Plan async orders (k > 0) for the comm this cost model will charge.
        const StageCost& first = request.costs.stages.front();
        if (first.forward > 0) {
            params.commRatio =
                static_cast<double>(request.costs.commTime(first.sendBytes)) / static_cast<double>(first.forward);
        }
    }
    auto schedule = generateUnvalidated(params);
    if (!schedule) {
        return schedule.error();
    }
    return simulateGenerated(std::move(*schedule), request.costs, request.microBatchSize);
}

} // namespace bs::runtime
