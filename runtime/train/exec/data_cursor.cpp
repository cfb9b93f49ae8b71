// The training data's position across live Apply (DataCursor, session_state.h).
#include "runtime/train/exec/session_state.h"

namespace bs::runtime {

MicroBatch DataCursor::batch(const TokenSource& source, std::int64_t mb) const
{
    const std::int64_t row = firstSequence + (mb - firstMicrobatch) * batchSize;
    if (row % batchSize == 0) {
        return source.batch(Split::Train, row / batchSize, batchSize);
    }
    MicroBatch out; // not aligned to b: gather the rows one by one
    for (int r = 0; r < batchSize; ++r) {
        MicroBatch one = source.batch(Split::Train, row + r, 1);
        out.batchSize += one.batchSize;
        out.seqLen = one.seqLen;
        out.inputs.insert(out.inputs.end(), one.inputs.begin(), one.inputs.end());
        out.targets.insert(out.targets.end(), one.targets.begin(), one.targets.end());
    }
    return out;
}

TokenBatch toTokenBatch(MicroBatch m)
{
    return TokenBatch{m.batchSize, m.seqLen, std::move(m.inputs), std::move(m.targets)};
}

} // namespace bs::runtime
