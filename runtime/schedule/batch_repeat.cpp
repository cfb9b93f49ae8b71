#include "runtime/schedule/batch_repeat.h"

#include "base/huge_pages.h"

namespace bs::runtime::detail {

void appendBatches(std::vector<Action>& program, const std::vector<Action>& block, int m, int batches, int from)
{
    if (batches <= 0 || block.empty()) {
        return;
    }
    // Per action of the block, what one batch moves each of its fields by: no branch per action.
    struct Step
    {
        int microbatch, range, pair;
    };
    std::vector<Step> steps;
    steps.reserve(block.size());
    for (const Action& a : block) {
        const bool isUpdate = a.kind == ActionKind::Update;
        steps.push_back({isUpdate ? 1 : m, isUpdate ? m : 0, a.isOverlap() ? m : 0});
    }
    reserveAdvised(program, program.size() + block.size() * static_cast<std::size_t>(batches));
    for (int n = from; n < from + batches; ++n) {
        const std::size_t at = program.size();
        program.insert(program.end(), block.begin(), block.end());
        Action* out = program.data() + at;
        for (std::size_t i = 0; i < steps.size(); ++i) {
            out[i].microbatch += n * steps[i].microbatch;
            out[i].firstMb += n * steps[i].range;
            out[i].lastMb += n * steps[i].range;
            out[i].pairMicrobatch += n * steps[i].pair;
        }
    }
}

} // namespace bs::runtime::detail
