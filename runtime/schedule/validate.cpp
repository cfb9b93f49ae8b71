#include "runtime/schedule/validate.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace bs::runtime {

namespace {

struct MicrobatchState
{
    bool forward = false;
    bool inputGrad = false; // B or I done
    bool weightGrad = false;// B or W done
    bool applied = false;   // covered by an update
};

Error violation(const Schedule& schedule, int stage, int step, const std::string& why)
{
    const auto& action = schedule.programs[static_cast<std::size_t>(stage)][static_cast<std::size_t>(step)];
    return makeError(ErrorCode::InvalidArgument,
                     "stage " + std::to_string(stage) + ", step " + std::to_string(step) + " (" + toString(action)
                         + "): " + why,
                     formatGrid(schedule, step));
}

// Per-stage rules: order of F, B/I, W and U for every micro-batch, the in-flight bound, and for
// flush schedules that a batch's forwards wait for the previous batch's update.
Status checkStage(const Schedule& schedule, int s)
{
    const int total = schedule.totalMicrobatches();
    const auto& program = schedule.programs[static_cast<std::size_t>(s)];
    std::vector<MicrobatchState> mbs(static_cast<std::size_t>(total));
    const int bound = s < static_cast<int>(schedule.inflightBound.size())
                          ? schedule.inflightBound[static_cast<std::size_t>(s)]
                          : total;
    int inflight = 0;
    int updatedBatches = 0; // flush: batches whose update this stage has applied
    // Stash policies: the weight versions this stage must hold are the current one and every
    // version an in-flight micro-batch was forwarded with (its backward runs on that version).
    const bool stashes = schedule.weights == WeightPolicy::Stash || schedule.weights == WeightPolicy::TwoVersions;
    const int versionBound = s < static_cast<int>(schedule.weightVersionBound.size())
                                 ? schedule.weightVersionBound[static_cast<std::size_t>(s)]
                                 : total + 1;
    int version = 0;                 // updates this stage has applied so far
    std::vector<int> forwardVersion(static_cast<std::size_t>(total), 0);
    std::map<int, int> heldVersions; // forward version -> in-flight micro-batches forwarded on it
    const auto checkVersions = [&](int step) -> Status {
        const int held = static_cast<int>(heldVersions.size()) + (heldVersions.count(version) > 0 ? 0 : 1);
        if (stashes && held > versionBound) {
            return violation(schedule, s, step, std::to_string(held) + " weight versions held, bound is "
                                                    + std::to_string(versionBound));
        }
        return ok();
    };
    for (int step = 0; step < static_cast<int>(program.size()); ++step) {
        const Action& a = program[static_cast<std::size_t>(step)];
        if (a.stage != s) {
            return violation(schedule, s, step, "action belongs to stage " + std::to_string(a.stage));
        }
        if (a.kind == ActionKind::Update) {
            if (a.firstMb < 0 || a.lastMb >= total || a.firstMb > a.lastMb) {
                return violation(schedule, s, step, "update range outside micro-batches 0.." + std::to_string(total - 1));
            }
            for (int mb = a.firstMb; mb <= a.lastMb; ++mb) {
                auto& st = mbs[static_cast<std::size_t>(mb)];
                if (!st.weightGrad) {
                    return violation(schedule, s, step, "applies micro-batch " + std::to_string(mb)
                                                            + " before its weight gradient exists");
                }
                if (st.applied) {
                    return violation(schedule, s, step, "applies micro-batch " + std::to_string(mb) + " twice");
                }
                st.applied = true;
            }
            if (schedule.weights == WeightPolicy::Flush) {
                ++updatedBatches;
            }
            ++version;
            if (Status held = checkVersions(step); !held) {
                return held;
            }
            continue;
        }
        if (a.microbatch < 0 || a.microbatch >= total) {
            return violation(schedule, s, step, "micro-batch outside 0.." + std::to_string(total - 1));
        }
        auto& st = mbs[static_cast<std::size_t>(a.microbatch)];
        switch (a.kind) {
        case ActionKind::Forward:
            if (st.forward) {
                return violation(schedule, s, step, "second forward of this micro-batch");
            }
            if (schedule.weights == WeightPolicy::Flush && schedule.batchOf(a.microbatch) > updatedBatches) {
                return violation(schedule, s, step, "forward of batch " + std::to_string(schedule.batchOf(a.microbatch))
                                                        + " before this stage's update of the previous batch (flush)");
            }
            st.forward = true;
            if (++inflight > bound) {
                return violation(schedule, s, step, std::to_string(inflight) + " micro-batches in flight, bound is "
                                                        + std::to_string(bound));
            }
            forwardVersion[static_cast<std::size_t>(a.microbatch)] = version;
            ++heldVersions[version];
            if (Status held = checkVersions(step); !held) {
                return held;
            }
            break;
        case ActionKind::Backward:
        case ActionKind::BackwardInput:
            if (!st.forward) {
                return violation(schedule, s, step, "backward before its forward");
            }
            if (st.inputGrad) {
                return violation(schedule, s, step, "second backward of this micro-batch");
            }
            st.inputGrad = true;
            st.weightGrad = a.kind == ActionKind::Backward;
            --inflight;
            if (auto it = heldVersions.find(forwardVersion[static_cast<std::size_t>(a.microbatch)]);
                it != heldVersions.end() && --it->second == 0) {
                heldVersions.erase(it);
            }
            break;
        case ActionKind::BackwardWeight:
            if (!st.inputGrad || st.weightGrad) {
                return violation(schedule, s, step, "weight gradient needs exactly one earlier input gradient (I)");
            }
            st.weightGrad = true;
            break;
        case ActionKind::Update: break;
        }
    }
    for (int mb = 0; mb < total; ++mb) {
        const auto& st = mbs[static_cast<std::size_t>(mb)];
        if (!st.forward || !st.inputGrad || !st.weightGrad || !st.applied) {
            const char* missing = !st.forward ? "forward" : !st.inputGrad ? "backward" : !st.weightGrad ? "weight gradient"
                                                                                                       : "update";
            return makeError(ErrorCode::InvalidArgument,
                             "stage " + std::to_string(s) + ": micro-batch " + std::to_string(mb) + " has no " + missing,
                             formatGrid(schedule));
        }
    }
    return ok();
}

// Cross-stage dependencies: replays the programs with only data dependencies as the clock. If no
// stage's next action can run, the schedule deadlocks at that step.
Status checkDeadlock(const Schedule& schedule)
{
    const int p = schedule.stages();
    const auto total = static_cast<std::size_t>(schedule.totalMicrobatches());
    std::vector<std::vector<char>> fwd(static_cast<std::size_t>(p), std::vector<char>(total, 0));
    std::vector<std::vector<char>> bwd(static_cast<std::size_t>(p), std::vector<char>(total, 0));
    std::vector<std::size_t> pc(static_cast<std::size_t>(p), 0);
    for (bool progress = true; progress;) {
        progress = false;
        for (int s = 0; s < p; ++s) {
            const auto& program = schedule.programs[static_cast<std::size_t>(s)];
            auto& i = pc[static_cast<std::size_t>(s)];
            for (; i < program.size(); ++i) {
                const Action& a = program[i];
                const auto mb = static_cast<std::size_t>(std::max(a.microbatch, 0));
                if (a.kind == ActionKind::Forward) {
                    if (s > 0 && !fwd[static_cast<std::size_t>(s - 1)][mb]) {
                        break;
                    }
                    fwd[static_cast<std::size_t>(s)][mb] = 1;
                } else if (a.isBackwardLike()) {
                    if (s < p - 1 && !bwd[static_cast<std::size_t>(s + 1)][mb]) {
                        break;
                    }
                    bwd[static_cast<std::size_t>(s)][mb] = 1;
                }
                progress = true;
            }
        }
    }
    for (int s = 0; s < p; ++s) {
        const auto step = pc[static_cast<std::size_t>(s)];
        if (step < schedule.programs[static_cast<std::size_t>(s)].size()) {
            return makeError(ErrorCode::Deadlock,
                             "deadlock: stage " + std::to_string(s) + " waits forever at step " + std::to_string(step)
                                 + " (" + toString(schedule.programs[static_cast<std::size_t>(s)][step])
                                 + ") for an input no stage will produce",
                             formatGrid(schedule, static_cast<int>(step)));
        }
    }
    return ok();
}

} // namespace

Status validate(const Schedule& schedule)
{
    if (schedule.programs.empty()) {
        return makeError(ErrorCode::InvalidArgument, "schedule has no stages");
    }
    for (int s = 0; s < schedule.stages(); ++s) {
        if (auto status = checkStage(schedule, s); !status) {
            return status;
        }
    }
    return checkDeadlock(schedule);
}

std::string formatGrid(const Schedule& schedule, int errorStep, int maxRows)
{
    std::size_t rows = 0;
    for (const auto& program : schedule.programs) {
        rows = std::max(rows, program.size());
    }
    // Show a window around the error step, or the start of the schedule.
    const int first = errorStep >= 0 ? std::max(0, errorStep - maxRows / 2) : 0;
    const int last = std::min(static_cast<int>(rows), first + maxRows);
    std::ostringstream out;
    out << "step ";
    for (int s = 0; s < schedule.stages(); ++s) {
        out << " | stage " << s << "  ";
    }
    out << '\n';
    for (int step = first; step < last; ++step) {
        out << (step < 10 ? "   " : step < 100 ? "  " : step < 1000 ? " " : "") << step << " ";
        for (const auto& program : schedule.programs) {
            std::string cell = static_cast<std::size_t>(step) < program.size()
                                   ? toString(program[static_cast<std::size_t>(step)])
                                   : "";
            cell.resize(std::max<std::size_t>(cell.size(), 9), ' ');
            out << " | " << cell;
        }
        if (step == errorStep) {
            out << "  <-- ERROR HERE";
        }
        out << '\n';
    }
    if (static_cast<std::size_t>(last) < rows) {
        out << "  ... (" << rows - static_cast<std::size_t>(last) << " more steps)\n";
    }
    return out.str();
}

} // namespace bs::runtime
