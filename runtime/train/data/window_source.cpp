#include "runtime/train/data/window_source.h"

#include "runtime/train/data/counter_rng.h"

#include <cmath>

namespace bs::runtime {

namespace {
constexpr std::uint64_t kTrainStream = 0x747261696e;
constexpr std::uint64_t kValStream = 0x76616c;
} // namespace

Result<std::unique_ptr<TokenSource>> WindowSource::create(
    TokenArray tokens, int vocab, int seqLen, std::uint64_t seed, double valFraction, std::string label)
{
    const std::size_t n = tokens.size();
    const auto trainCount = static_cast<std::size_t>(std::floor(static_cast<double>(n) * (1.0 - valFraction)));
    const std::size_t valCount = n - trainCount;
    const auto need = static_cast<std::size_t>(seqLen) + 1;
    if (trainCount < need) {
        return makeError(ErrorCode::ParseError,
            label + " has " + std::to_string(trainCount) + " training tokens (of " + std::to_string(n)
                + "); one sequence needs model.seq_len + 1 = " + std::to_string(need),
            label);
    }
    if (valFraction > 0.0 && valCount < need) {
        return makeError(ErrorCode::ParseError,
            label + " has " + std::to_string(valCount)
                + " validation tokens (data.val_fraction = " + std::to_string(valFraction) + " of " + std::to_string(n)
                + "); one sequence needs model.seq_len + 1 = " + std::to_string(need)
                + ": raise data.val_fraction or use a longer file",
            label);
    }
    return std::unique_ptr<TokenSource>(
        new WindowSource(std::move(tokens), trainCount, vocab, seqLen, seed, std::move(label)));
}

WindowSource::WindowSource(
    TokenArray tokens, std::size_t trainCount, int vocab, int seqLen, std::uint64_t seed, std::string label)
    : m_tokens(std::move(tokens))
    , m_trainCount(trainCount)
    , m_vocab(vocab)
    , m_seqLen(seqLen)
    , m_seed(seed)
    , m_label(std::move(label))
{}

MicroBatch WindowSource::batch(Split split, std::int64_t index, int batchSize) const
{
    const bool train = split == Split::Train;
    const std::size_t begin = train ? 0 : m_trainCount;
    const std::size_t count = train ? m_trainCount : m_tokens.size() - m_trainCount;
    const auto t = static_cast<std::size_t>(m_seqLen);
    MicroBatch mb;
    if (count < t + 1) { // only an empty validation split gets here
        return mb;
    }
    mb.batchSize = batchSize;
    mb.seqLen = m_seqLen;
    mb.inputs.resize(static_cast<std::size_t>(batchSize) * t);
    mb.targets.resize(mb.inputs.size());
    const std::uint64_t stream = train ? kTrainStream : kValStream;
    for (int r = 0; r < batchSize; ++r) {
        const auto sequence = static_cast<std::uint64_t>(index * batchSize + r);
        CounterRng rng(streamSeed(m_seed, stream, sequence));
        const std::size_t offset = begin + static_cast<std::size_t>(rng.below(count - t)); // window [o, o+t]
        const std::size_t row = static_cast<std::size_t>(r) * t;
        for (std::size_t i = 0; i < t; ++i) {
            mb.inputs[row + i] = m_tokens[offset + i];
            mb.targets[row + i] = m_tokens[offset + i + 1];
        }
    }
    return mb;
}

std::string WindowSource::describe() const
{
    return m_label + ": " + std::to_string(m_trainCount) + " train + " + std::to_string(m_tokens.size() - m_trainCount)
        + " validation tokens, vocab " + std::to_string(m_vocab);
}

std::optional<std::int64_t> WindowSource::tokenCount(Split split) const
{
    const std::size_t n = split == Split::Train ? m_trainCount : m_tokens.size() - m_trainCount;
    return static_cast<std::int64_t>(n);
}

} // namespace bs::runtime
