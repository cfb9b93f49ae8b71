// Pass 1's leap (periodic_leap.h): the plan read off the period's events, and the first walk
// with the copies taken in one step once its state repeats.

#include "profiler/analysis/periodic_leap.h"

#include "profiler/trace/trace_store.h"

#include <algorithm>
#include <map>
#include <utility>

namespace bs::profiler::detail {

namespace {

// A map's entries from `low` on, in key order.
template<typename V>
std::vector<std::pair<int, V>> entriesFrom(const std::map<int, V>& map, int low)
{
    return {map.lower_bound(low), map.end()};
}

// Whether `now`'s entries from `low + step` on are `earlier` (a copy of the entries from `low`
// on) moved one period: keys `step` up and each value such that movedOnce(value, earlier value).
template<typename V, typename MovedOnce>
bool entriesRepeat(
    const std::map<int, V>& now, const std::vector<std::pair<int, V>>& earlier, int low, int step, MovedOnce movedOnce)
{
    auto it = now.lower_bound(low + step);
    for (const auto& [key, value] : earlier) {
        if (it == now.end() || it->first != key + step || !movedOnce(it->second, value)) {
            return false;
        }
        ++it;
    }
    return it == now.end();
}

// The map after k more periods: the entries below low + step stay, the band [low, low + step)
// is written moved 1..k − 1 times, and everything from `low` on moved k times (moved(value, j)).
template<typename V, typename Moved>
void leapEntries(std::map<int, V>& map, int low, int step, std::size_t k, Moved moved)
{
    const std::vector<std::pair<int, V>> window = entriesFrom(map, low);
    map.erase(map.lower_bound(low + step), map.end());
    for (std::size_t j = 1; j < k; ++j) {
        for (const auto& [key, value] : window) {
            if (key >= low + step) {
                break;
            }
            map.emplace_hint(map.end(), key + step * static_cast<int>(j), moved(value, j));
        }
    }
    for (const auto& [key, value] : window) {
        map.emplace_hint(map.end(), key + step * static_cast<int>(k), moved(value, k));
    }
}

} // namespace

std::optional<LeapPlan> leapPlanFor(const TraceSnapshot& trace, const AnalysisOptions& options, int lanes)
{
    const std::optional<TraceRepeat>& repeat = trace.repeat();
    if (!repeat || repeat->copies < PeriodicLeap::kMinCopies || !options.laterSettings.empty()) {
        return std::nullopt;
    }
    const int m = std::max(1, options.microbatchesPerBatch);
    if (repeat->microbatches % m != 0) {
        return std::nullopt;
    }
    LeapPlan plan;
    plan.repeat = *repeat;
    plan.batches = repeat->microbatches / m;
    bool anyWork = false, keyed = true;
    trace.forEachIn(repeat->first, repeat->first + repeat->length, [&](const TraceEvent& e) {
        if (isAnalysed(e)) {
            plan.firstStart = anyWork ? std::min(plan.firstStart, e.start) : e.start;
            anyWork = true;
            if (e.kind == EventKind::Update) {
                return;
            }
            if (e.microbatch < 0) {
                keyed = false; // work of no micro-batch: batch 0's forward span, say
                return;
            }
            plan.slots.add(e.microbatch);
            if (e.kind == EventKind::Forward) {
                plan.forwardBatches.add(e.microbatch / m);
            }
            if (e.kind == EventKind::Forward || isBackwardLike(e.kind)) {
                plan.reads.add(e.microbatch);
            }
        } else if (e.kind == EventKind::Send && e.microbatch >= 0 && e.aux < lanes) {
            plan.sends.add(e.microbatch);
        }
    });
    if (!anyWork || !keyed) {
        return std::nullopt;
    }
    return plan;
}

// Pass 1 over one trace: walks it in append order, marks the state at the start of a copy,
// compares the next copy's start with it and, once they repeat, writes the state after the last.
struct PeriodicLeap::FirstWalk
{
    const TraceSnapshot& trace;
    const LeapPlan& plan;
    FirstPassState& state;
    std::size_t at = 0; // the next event to walk
    int maxKey = -1; // the highest micro-batch of any event walked but an update (an index)

    struct LaneMark
    {
        std::size_t count = 0;
        TimeNs lastStart = 0, lastEnd = 0, lastForwardEnd = 0;
        int lastBatch = 0;
        std::vector<std::pair<int, LaneFacts::Span>> spans; // from batchLow(a)
        int inflight = 0, current = 0;
        std::int64_t activation = 0;
        std::vector<int> lagCounts;
        std::vector<std::pair<int, int>> liveVersions; // stashed version -> micro-batches using it
        std::vector<MemorySlot> slots; // keys [slotLow(a), maxKey], chunks each
        std::vector<std::uint8_t> counts; // keys [sendLow(a), maxKey]
        std::vector<Interval> in; // likewise, transfers.slots each (count of them read)
    };
    struct Mark
    {
        std::size_t copy = 0;
        int maxKey = -1;
        TimeNs t0 = 0, t1 = 0;
        std::vector<LaneMark> lanes;
        int forwards = 0, maxMicrobatch = -1;
        TimeNs firstBackwardEnd = -1;
        std::vector<std::pair<int, TimeNs>> batchStarts; // from batchLow(a)
    };

    // Copy c's lowest keys: its events touch none below.
    int slotLow(std::size_t c) const { return plan.slots.low + times(plan.repeat.microbatches, c); }
    int sendLow(std::size_t c) const { return plan.sends.low + times(plan.repeat.microbatches, c); }
    int batchLow(std::size_t c) const { return plan.forwardBatches.low + times(plan.batches, c); }
    TimeNs shift() const { return plan.repeat.shift; }
    int step() const { return plan.repeat.microbatches; }
    std::size_t keys() const { return state.transfers.mbs; }
    std::size_t chunks() const { return static_cast<std::size_t>(state.chunks); }
    MemorySlot* slotsOf(std::size_t lane, int key) const
    {
        return state.slots.data() + lane * state.slotsPerLane() + static_cast<std::size_t>(key) * chunks();
    }
    std::size_t transferKey(std::size_t lane, int key) const { return lane * keys() + static_cast<std::size_t>(key); }

    void walkTo(std::size_t to)
    {
        trace.forEachIn(at, to, [&](const TraceEvent& e) {
            state.add(e);
            if (e.kind != EventKind::Update) {
                maxKey = std::max(maxKey, e.microbatch);
            }
        });
        at = to;
    }

    Mark markAt(std::size_t copy) const
    {
        Mark mark;
        mark.copy = copy;
        mark.maxKey = maxKey;
        mark.t0 = state.t0;
        mark.t1 = state.t1;
        for (std::size_t lane = 0; lane < state.facts.size(); ++lane) {
            const LaneFacts& facts = state.facts[lane];
            const LaneMemory& memory = state.memory[lane];
            LaneMark& out = mark.lanes.emplace_back();
            out.count = facts.m_count;
            out.lastStart = facts.m_lastStart;
            out.lastEnd = facts.m_lastEnd;
            out.lastForwardEnd = facts.m_lastForwardEnd;
            out.lastBatch = facts.m_lastBatch;
            out.spans = entriesFrom(facts.m_forwardSpan, batchLow(copy));
            out.inflight = memory.m_inflight;
            out.current = memory.m_current;
            out.activation = memory.m_activation;
            out.lagCounts = memory.m_lagCounts;
            out.liveVersions = memory.m_liveVersions.entries();
            if (plan.slots.any() && slotLow(copy) <= maxKey) {
                out.slots.assign(slotsOf(lane, slotLow(copy)), slotsOf(lane, maxKey + 1));
            }
            if (plan.sends.any() && sendLow(copy) <= maxKey) {
                const std::size_t from = transferKey(lane, sendLow(copy)), to = transferKey(lane, maxKey + 1);
                out.counts.assign(&state.transfers.count[from], &state.transfers.count[0] + to);
                out.in.assign(&state.transfers.in[from * state.transfers.slots],
                    state.transfers.in.data() + to * state.transfers.slots);
            }
        }
        mark.forwards = state.lead.forwards;
        mark.maxMicrobatch = state.lead.maxMicrobatch;
        mark.firstBackwardEnd = state.lead.firstBackwardEnd;
        mark.batchStarts = entriesFrom(state.lead.batchStart, batchLow(copy));
        return mark;
    }

    // Whether the state now, at the start of copy e.copy + 1, is e moved one period, and the state
    // after `leaps` more periods fits the slots.
    bool repeats(const Mark& e, std::size_t leaps) const
    {
        const std::size_t a = e.copy;
        const int lastKey = maxKey + times(step(), leaps); // the highest key the leap writes
        if (!state.fits || !state.any || state.seen != plan.repeat.begin(a + 1) || state.t1 != e.t1 + shift()
            || lastKey >= static_cast<int>(keys())) {
            return false;
        }
        const auto spanMoved = [&](const LaneFacts::Span& now, const LaneFacts::Span& earlier) {
            return isMoved(now.forwards, earlier.forwards, shift()) && now.synchronous == earlier.synchronous;
        };
        for (std::size_t lane = 0; lane < state.facts.size(); ++lane) {
            const LaneFacts& facts = state.facts[lane];
            const LaneMemory& memory = state.memory[lane];
            const LaneMark& was = e.lanes[lane];
            if (facts.m_count != was.count || was.count > 0) {
                const bool moved = was.count > 0 && facts.m_count > was.count && facts.m_sorted
                    && facts.m_lastStart == was.lastStart + shift() && facts.m_lastEnd == was.lastEnd + shift()
                    && facts.m_anyForward && facts.m_lastForwardEnd == was.lastForwardEnd + shift()
                    && facts.m_lastSpan != nullptr && facts.m_lastBatch == was.lastBatch + plan.batches
                    && entriesRepeat(facts.m_forwardSpan, was.spans, batchLow(a), plan.batches, spanMoved);
                if (!moved) {
                    return false; // a lane whose events stop or change in the copies, say
                }
            }
            const bool used = was.count > 0; // an unused lane's memory stays as it is
            if (memory.m_inflight != was.inflight || memory.m_activation != was.activation
                || memory.m_current != was.current + (used ? plan.repeat.updates : 0)
                || !versionsRepeat(memory.m_liveVersions.entries(), was.liveVersions) || !slotsRepeat(e, lane)
                || !transfersRepeat(e, lane)) {
                return false;
            }
        }
        const LeadLaneFacts& lead = state.lead;
        return state.t0 == e.t0 && lead.firstBackwardEnd == e.firstBackwardEnd
            && lead.maxMicrobatch == e.maxMicrobatch + step()
            && entriesRepeat(lead.batchStart, e.batchStarts, batchLow(a), plan.batches,
                [&](TimeNs now, TimeNs earlier) { return now == earlier + shift(); });
    }

    // Stashed versions: the same micro-batches on each, every version one period's updates up.
    bool versionsRepeat(
        const std::vector<std::pair<int, int>>& now, const std::vector<std::pair<int, int>>& earlier) const
    {
        return std::equal(now.begin(), now.end(), earlier.begin(), earlier.end(), [&](const auto& x, const auto& y) {
            return x.first == y.first + plan.repeat.updates && x.second == y.second;
        });
    }

    // The keys [low(a + 1), the highest either state may hold]: each against the earlier one's key
    // one period down, key − step, at index key − step − low(a) = key − lowNow of the mark's window
    // (which starts at low(a)), or -1 (a default entry) beyond what that state had walked.
    template<typename Same>
    bool keysRepeat(int lowNow, int earlierMaxKey, Same same) const
    {
        const int high = std::min(static_cast<int>(keys()) - 1, std::max(maxKey, earlierMaxKey + step()));
        for (int key = lowNow; key <= high; ++key) {
            if (!same(key, key - step() <= earlierMaxKey ? key - lowNow : -1)) {
                return false;
            }
        }
        return true;
    }

    bool slotsRepeat(const Mark& e, std::size_t lane) const
    {
        if (!plan.slots.any()) {
            return true; // no copy touches a slot
        }
        const std::vector<MemorySlot>& was = e.lanes[lane].slots;
        return keysRepeat(slotLow(e.copy + 1), e.maxKey, [&](int key, int earlier) {
            const MemorySlot* now = slotsOf(lane, key);
            for (std::size_t c = 0; c < chunks(); ++c) {
                const MemorySlot before =
                    earlier < 0 ? MemorySlot{} : was[static_cast<std::size_t>(earlier) * chunks() + c];
                const int version = before.forwardVersion == -1 ? -1 : before.forwardVersion + plan.repeat.updates;
                if (now[c].heldBytes != before.heldBytes || now[c].forwardVersion != version) {
                    return false;
                }
            }
            return true;
        });
    }

    bool transfersRepeat(const Mark& e, std::size_t lane) const
    {
        if (!plan.sends.any()) {
            return true;
        }
        const LaneMark& was = e.lanes[lane];
        const Transfers& transfers = state.transfers;
        return keysRepeat(sendLow(e.copy + 1), e.maxKey, [&](int key, int earlier) {
            const std::size_t now = transferKey(lane, key);
            const std::uint8_t count = earlier < 0 ? 0 : was.counts[static_cast<std::size_t>(earlier)];
            if (transfers.count[now] != count) {
                return false;
            }
            return transfersMoved(&transfers.in[now * transfers.slots],
                &was.in[static_cast<std::size_t>(earlier) * transfers.slots], count, shift());
        });
    }

    // The state after `k` more periods, from the state now (the start of copy e.copy + 1).
    void leap(const Mark& e, std::size_t k)
    {
        const std::size_t a = e.copy;
        const TimeNs by = times(shift(), k);
        state.seen += k * plan.repeat.length;
        state.t1 += by;
        state.resumable = false;
        state.resumePoints.clear();
        const auto spanMoved = [&](LaneFacts::Span span, std::size_t j) {
            span.forwards.start += times(shift(), j);
            span.forwards.end += times(shift(), j);
            return span;
        };
        for (std::size_t lane = 0; lane < state.facts.size(); ++lane) {
            LaneFacts& facts = state.facts[lane];
            LaneMemory& memory = state.memory[lane];
            const LaneMark& was = e.lanes[lane];
            if (plan.slots.any()) {
                leapSlots(lane, slotLow(a), k);
            }
            if (plan.sends.any()) {
                leapTransfers(lane, sendLow(a), k); // into a lane with no work of its own too
            }
            if (facts.m_count == was.count) {
                continue; // unused: nothing of the lane moves (its slots, which repeats() compared, stay empty)
            }
            facts.m_count += k * (facts.m_count - was.count);
            facts.m_lastStart += by;
            facts.m_lastEnd += by;
            facts.m_lastForwardEnd += by;
            facts.m_lastBatch += times(plan.batches, k);
            leapEntries(facts.m_forwardSpan, batchLow(a), plan.batches, k, spanMoved);
            const auto last = facts.m_forwardSpan.find(facts.m_lastBatch);
            facts.m_lastSpan = last == facts.m_forwardSpan.end() ? nullptr : &last->second;
            memory.m_current += times(plan.repeat.updates, k);
            memory.m_liveVersions.moveKeys(times(plan.repeat.updates, k));
            for (std::size_t lag = 0; lag < memory.m_lagCounts.size(); ++lag) {
                const int before = lag < was.lagCounts.size() ? was.lagCounts[lag] : 0;
                memory.m_lagCounts[lag] += times(memory.m_lagCounts[lag] - before, k);
            }
        }
        LeadLaneFacts& lead = state.lead;
        lead.forwards += times(lead.forwards - e.forwards, k);
        lead.maxMicrobatch += times(step(), k);
        leapEntries(lead.batchStart, batchLow(a), plan.batches, k,
            [&](TimeNs t, std::size_t j) { return t + times(shift(), j); });
        maxKey += times(step(), k);
    }

    // Writes key `to` as key `from` moved j periods, for the keys of the window [low, maxKey]
    // moved k (from the top: each goes up, over keys already read) and then the band
    // [low, low + step) moved 1..k − 1 (below the window's new place).
    template<typename Write>
    void leapKeys(int low, std::size_t k, Write write)
    {
        for (int key = maxKey; key >= low; --key) {
            write(key + times(step(), k), key, k);
        }
        for (std::size_t j = 1; j < k; ++j) {
            for (int key = low; key < low + step() && key <= maxKey; ++key) {
                write(key + times(step(), j), key, j);
            }
        }
    }

    void leapSlots(std::size_t lane, int low, std::size_t k)
    {
        leapKeys(low, k, [&](int to, int from, std::size_t j) {
            const MemorySlot* source = slotsOf(lane, from);
            MemorySlot* target = slotsOf(lane, to);
            for (std::size_t c = 0; c < chunks(); ++c) {
                target[c].heldBytes = source[c].heldBytes;
                target[c].forwardVersion =
                    source[c].forwardVersion == -1 ? -1 : source[c].forwardVersion + times(plan.repeat.updates, j);
            }
        });
    }

    void leapTransfers(std::size_t lane, int low, std::size_t k)
    {
        Transfers& transfers = state.transfers;
        leapKeys(low, k, [&](int to, int from, std::size_t j) {
            const std::size_t target = transferKey(lane, to), source = transferKey(lane, from);
            transfers.count[target] = transfers.count[source];
            for (std::size_t i = 0; i < transfers.count[source]; ++i) {
                const Interval& t = transfers.in[source * transfers.slots + i];
                transfers.in[target * transfers.slots + i] = {t.start + times(shift(), j), t.end + times(shift(), j)};
            }
        });
    }
};

bool PeriodicLeap::walkFirstPass(const TraceSnapshot& trace, const LeapPlan& plan, FirstPassState& state)
{
    FirstWalk walk{trace, plan, state};
    const TraceRepeat& repeat = plan.repeat;
    for (std::size_t a = kFirstTry; a <= kLastTry && a + 1 <= repeat.copies; ++a) {
        walk.walkTo(repeat.begin(a));
        const FirstWalk::Mark earlier = walk.markAt(a);
        walk.walkTo(repeat.begin(a + 1));
        const std::size_t leaps = repeat.copies - a; // to the start of the events after the copies
        if (walk.repeats(earlier, leaps)) {
            walk.leap(earlier, leaps);
            walk.at = repeat.begin(repeat.copies + 1);
            walk.walkTo(trace.size());
            return true;
        }
    }
    walk.walkTo(trace.size());
    return false;
}

} // namespace bs::profiler::detail
