#include "runtime/plan/schedule/batch_repeat.h"

namespace bs::runtime::detail {

void appendBatches(std::vector<Action>& program, const std::vector<Action>& block, int m, int batches, int from)
{
    if (batches <= 0 || block.empty()) {
        return;
    }
    // Each action's step worked out once: no branch per action in the copies.
    std::vector<BatchStep> steps;
    steps.reserve(block.size());
    for (const Action& a : block) {
        steps.push_back(batchStepOf(a, m));
    }
    program.reserve(program.size() + block.size() * static_cast<std::size_t>(batches));
    for (int n = from; n < from + batches; ++n) {
        const std::size_t at = program.size();
        program.insert(program.end(), block.begin(), block.end());
        Action* out = program.data() + at;
        for (std::size_t i = 0; i < steps.size(); ++i) {
            moveBy(out[i], steps[i], n);
        }
    }
}

} // namespace bs::runtime::detail
