#pragma once
// Token sources: deterministic micro-batches of token ids as plain vectors (no torch). A
// micro-batch is a pure function of (source, seed, split, index, size), so every schedule, every
// executor and the non-pipelined reference see the same tokens in the same order.

#include "base/result.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bs::runtime {

enum class Split : std::uint8_t
{
    Train,
    Validation,
};

/// b sequences of T tokens and their next-token targets.
struct MicroBatch
{
    int batchSize = 0; ///< b (0 for an empty split)
    int seqLen = 0; ///< T
    std::vector<std::int32_t> inputs; ///< (b, T) row-major
    std::vector<std::int32_t> targets; ///< (b, T): targets[r][t] is the token after inputs[r][t]

    friend bool operator==(const MicroBatch&, const MicroBatch&) = default;
};

class TokenSource
{
public:
    virtual ~TokenSource() = default;

    /// Micro-batch `index` (>= 0) of `split`, `batchSize` (>= 1) rows. Row r is sequence number
    /// index*batchSize + r of the split, so micro-batches of size b tile the same sequence stream
    /// as one batch of size m*b. Pure and thread-safe. An empty split (val_fraction 0) gives an
    /// empty MicroBatch.
    virtual MicroBatch batch(Split split, std::int64_t index, int batchSize) const = 0;

    /// Tokens lie in [0, vocab()).
    virtual int vocab() const = 0;
    virtual int seqLen() const = 0;

    /// One line for logs and the GUI: kind, file, token counts.
    virtual std::string describe() const = 0;

    /// The lowest achievable mean cross-entropy per target token, in nats, when known exactly
    /// (the synthetic stream); nullopt for real data.
    virtual std::optional<double> entropyFloorNats() const { return std::nullopt; }

    /// Tokens in the split; nullopt for an unbounded stream.
    virtual std::optional<std::int64_t> tokenCount(Split split) const = 0;
};

/// Opens a source from a data spec:
///   "synthetic"  seeded order-1 Markov chain over `vocab` tokens (entropy floor known exactly);
///   "text:PATH"  a UTF-8 text file as byte tokens (needs vocab >= 256 for non-ASCII text);
///   "bin:PATH"   llm.c token file (256 x int32 header, magic 20240520, version 1, uint16 tokens)
///                or a plain headerless uint16 file (nanoGPT).
/// Files are split into train (head) and validation (the last valFraction of tokens).
/// Errors: InvalidArgument (bad spec or parameters), IoError (missing/unreadable file),
/// ParseError (bad magic/version, truncated, odd size, invalid UTF-8, token >= vocab, too short
/// for one sequence); messages name the file and context gives the byte offset or token index.
Result<std::unique_ptr<TokenSource>> openTokenSource(
    std::string_view spec, int vocab, int seqLen, std::uint64_t seed, double valFraction);

} // namespace bs::runtime
