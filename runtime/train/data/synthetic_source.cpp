#include "runtime/train/data/synthetic_source.h"

#include "runtime/train/data/counter_rng.h"

#include <cstdio>

namespace bs::runtime {

namespace {
constexpr std::uint64_t kTrainStream = 0x747261696e; // "train"
constexpr std::uint64_t kValStream = 0x76616c; // "val": disjoint from train by construction
} // namespace

SyntheticSource::SyntheticSource(int vocab, int seqLen, std::uint64_t seed, int branching)
    : m_chain(vocab, branching, seed)
    , m_seqLen(seqLen)
    , m_seed(seed)
{}

MicroBatch SyntheticSource::batch(Split split, std::int64_t index, int batchSize) const
{
    MicroBatch mb;
    mb.batchSize = batchSize;
    mb.seqLen = m_seqLen;
    const auto t = static_cast<std::size_t>(m_seqLen);
    mb.inputs.resize(static_cast<std::size_t>(batchSize) * t);
    mb.targets.resize(mb.inputs.size());
    const std::uint64_t stream = split == Split::Train ? kTrainStream : kValStream;
    for (int r = 0; r < batchSize; ++r) {
        const auto sequence = static_cast<std::uint64_t>(index * batchSize + r);
        CounterRng rng(streamSeed(m_seed, stream, sequence));
        std::int32_t token = m_chain.sampleStationary(rng);
        const std::size_t row = static_cast<std::size_t>(r) * t;
        for (std::size_t i = 0; i < t; ++i) {
            mb.inputs[row + i] = token;
            token = m_chain.sampleNext(token, rng);
            mb.targets[row + i] = token;
        }
    }
    return mb;
}

std::string SyntheticSource::describe() const
{
    char buf[160];
    std::snprintf(buf, sizeof buf,
        "synthetic Markov chain: vocab %d, %d successors per token, seed %llu, "
        "entropy floor %.4f nats",
        m_chain.vocab(), m_chain.branching(), static_cast<unsigned long long>(m_seed), m_chain.entropyRateNats());
    return buf;
}

} // namespace bs::runtime
