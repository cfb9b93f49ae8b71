#pragma once
// A tiny deterministic token source for runtime tests: micro-batch i is a pure function of i.
// Sequences follow x[t+1] = (3·x[t] + 1) mod V with 10 % random tokens, so a GPT can learn them.

#include "runtime/train/model/model_options.h"

#include <random>

namespace bs::runtime::test {

inline GptShape tinyTestShape()
{
    GptShape s;
    s.layers = 4;
    s.dModel = 32;
    s.heads = 2;
    s.seqLen = 16;
    s.vocab = 64;
    return s;
}

inline TokenFn patternTokens(const GptShape& shape, int batch, std::uint64_t seed = 7)
{
    return [shape, batch, seed](std::int64_t mb) -> Result<TokenBatch> {
        std::mt19937_64 rng(seed * 7919U + static_cast<std::uint64_t>(mb));
        std::uniform_int_distribution<int> token(0, shape.vocab - 1);
        std::uniform_real_distribution<double> coin(0.0, 1.0);
        TokenBatch b;
        b.batch = batch;
        b.seq = shape.seqLen;
        for (int r = 0; r < batch; ++r) {
            int x = token(rng);
            std::vector<std::int32_t> row;
            for (int t = 0; t <= shape.seqLen; ++t) {
                row.push_back(x);
                x = coin(rng) < 0.1 ? token(rng) : (3 * x + 1) % shape.vocab;
            }
            b.inputs.insert(b.inputs.end(), row.begin(), row.end() - 1);
            b.targets.insert(b.targets.end(), row.begin() + 1, row.end());
        }
        return b;
    };
}

inline ModelOptions tinyModelOptions(int stages, int updateEvery, WeightPolicy weights)
{
    ModelOptions o;
    o.shape = tinyTestShape();
    o.stages = stages;
    o.microBatchSize = 2;
    o.updateEvery = updateEvery;
    o.weights = weights;
    o.optimizer.lr = 1e-2;
    o.seed = 42;
    return o;
}

} // namespace bs::runtime::test
