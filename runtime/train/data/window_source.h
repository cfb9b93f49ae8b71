#pragma once
// Real data: a token array (mapped from its file, or in memory), split into train (head) and validation (tail); each
// sequence is a window at a pseudo-random offset drawn from (seed, split, sequence number).

#include "runtime/train/data/token_files.h"
#include "runtime/train/data/token_source.h"

#include <string>
#include <vector>

namespace bs::runtime {

class WindowSource final : public TokenSource
{
public:
    /// Preconditions (checked by create()): every token < vocab; each non-empty split holds at
    /// least seqLen + 1 tokens.
    static Result<std::unique_ptr<TokenSource>> create(
        TokenArray tokens, int vocab, int seqLen, std::uint64_t seed, double valFraction, std::string label);

    MicroBatch batch(Split split, std::int64_t index, int batchSize) const override;
    int vocab() const override { return m_vocab; }
    int seqLen() const override { return m_seqLen; }
    std::string describe() const override;
    std::optional<std::int64_t> tokenCount(Split split) const override;

private:
    WindowSource(
        TokenArray tokens, std::size_t trainCount, int vocab, int seqLen, std::uint64_t seed, std::string label);

    TokenArray m_tokens; ///< train tokens [0, m_trainCount), validation after
    std::size_t m_trainCount;
    int m_vocab;
    int m_seqLen;
    std::uint64_t m_seed;
    std::string m_label;
};

} // namespace bs::runtime
