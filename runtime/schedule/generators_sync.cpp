// Synchronous schedules: every global batch ends in a flush and one update per stage.

#include "runtime/schedule/generators.h"

#include "base/huge_pages.h"

#include <algorithm>

namespace bs::runtime::detail {

namespace {

Schedule syncSkeleton(const ScheduleParams& params, std::vector<int> inflightBound)
{
    Schedule schedule;
    schedule.params = params;
    schedule.weights = WeightPolicy::Flush;
    schedule.inflightBound = std::move(inflightBound);
    schedule.weightVersionBound.assign(static_cast<std::size_t>(params.stages), 1);
    schedule.programs.resize(static_cast<std::size_t>(params.stages));
    return schedule;
}

void appendBatchUpdate(std::vector<Action>& program, int stage, int batch, int m)
{
    program.push_back(update(stage, batch, batch * m, batch * m + m - 1));
}

} // namespace

Schedule makeGpipe(const ScheduleParams& params)
{
    const int p = params.stages;
    const int m = params.microbatches;
    Schedule schedule = syncSkeleton(params, std::vector<int>(static_cast<std::size_t>(p), m));
    for (int s = 0; s < p; ++s) {
        auto& program = schedule.programs[static_cast<std::size_t>(s)];
        reserveAdvised(program, static_cast<std::size_t>(2 * m + 1) * static_cast<std::size_t>(params.batches));
        for (int n = 0; n < params.batches; ++n) {
            const int base = n * m;
            for (int i = 0; i < m; ++i) { // all forwards...
                program.push_back(forward(s, base + i));
            }
            for (int i = 0; i < m; ++i) { // ...then all backwards, in the same order (PyTorch's GPipe)
                program.push_back(backward(s, base + i));
            }
            appendBatchUpdate(program, s, n, m);
        }
    }
    return schedule;
}

Schedule makeOneFOneB(const ScheduleParams& params)
{
    const int p = params.stages;
    const int m = params.microbatches;
    std::vector<int> bound(static_cast<std::size_t>(p));
    for (int s = 0; s < p; ++s) {
        bound[static_cast<std::size_t>(s)] = std::min(p - s, m);
    }
    Schedule schedule = syncSkeleton(params, bound);
    for (int s = 0; s < p; ++s) {
        auto& program = schedule.programs[static_cast<std::size_t>(s)];
        reserveAdvised(program, static_cast<std::size_t>(2 * m + 1) * static_cast<std::size_t>(params.batches));
        const int warmup = std::min(p - s - 1, m);
        for (int n = 0; n < params.batches; ++n) {
            const int base = n * m;
            for (int i = 0; i < warmup; ++i) { // warm-up: fill this stage's share of the pipe
                program.push_back(forward(s, base + i));
            }
            for (int i = 0; i + warmup < m; ++i) { // steady: one forward, one backward
                program.push_back(forward(s, base + warmup + i));
                program.push_back(backward(s, base + i));
            }
            for (int i = std::max(m - warmup, 0); i < m; ++i) { // cool-down: drain the backwards
                program.push_back(backward(s, base + i));
            }
            appendBatchUpdate(program, s, n, m);
        }
    }
    return schedule;
}

} // namespace bs::runtime::detail
