#pragma once
// The default data: sequences sampled from a seeded MarkovChain, started in its stationary
// distribution, so every target position has the same known optimal loss (the entropy rate).

#include "runtime/train/data/markov_chain.h"
#include "runtime/train/data/token_source.h"

namespace bs::runtime {

class SyntheticSource final : public TokenSource
{
public:
    static constexpr int kBranching = 8; ///< successors per token: floor is about 1.7 nats

    SyntheticSource(int vocab, int seqLen, std::uint64_t seed, int branching = kBranching);

    MicroBatch batch(Split split, std::int64_t index, int batchSize) const override;
    int vocab() const override { return m_chain.vocab(); }
    int seqLen() const override { return m_seqLen; }
    std::string describe() const override;
    std::optional<double> entropyFloorNats() const override { return m_chain.entropyRateNats(); }
    std::optional<std::int64_t> tokenCount(Split) const override { return std::nullopt; }

    const MarkovChain& chain() const { return m_chain; }

private:
    MarkovChain m_chain;
    int m_seqLen;
    std::uint64_t m_seed;
};

} // namespace bs::runtime
