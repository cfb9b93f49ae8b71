#include "runtime/train/data/token_source.h"

#include "runtime/train/data/window_source.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace bs::runtime {
namespace {

std::unique_ptr<TokenSource> synthetic(std::uint64_t seed = 1234, int vocab = 256, int seqLen = 16)
{
    auto source = openTokenSource("synthetic", vocab, seqLen, seed, 0.1);
    EXPECT_TRUE(source);
    return std::move(source).value();
}

/// Rows [first, first + count) of a micro-batch as their own MicroBatch.
MicroBatch rows(const MicroBatch& mb, int first, int count)
{
    MicroBatch out;
    out.batchSize = count;
    out.seqLen = mb.seqLen;
    const auto t = static_cast<std::ptrdiff_t>(mb.seqLen);
    out.inputs.assign(mb.inputs.begin() + first * t, mb.inputs.begin() + (first + count) * t);
    out.targets.assign(mb.targets.begin() + first * t, mb.targets.begin() + (first + count) * t);
    return out;
}

TEST(TokenSource, SyntheticShapesAndTargetsAreNextTokens)
{
    auto source = synthetic();
    const MicroBatch mb = source->batch(Split::Train, 3, 4);
    EXPECT_EQ(mb.batchSize, 4);
    EXPECT_EQ(mb.seqLen, 16);
    ASSERT_EQ(mb.inputs.size(), 64u);
    ASSERT_EQ(mb.targets.size(), 64u);
    for (int r = 0; r < 4; ++r) {
        for (int t = 0; t + 1 < 16; ++t) {
            EXPECT_EQ(
                mb.targets[static_cast<std::size_t>(r * 16 + t)], mb.inputs[static_cast<std::size_t>(r * 16 + t + 1)]);
        }
    }
    EXPECT_TRUE(std::all_of(mb.inputs.begin(), mb.inputs.end(), [](int v) { return v >= 0 && v < 256; }));
    EXPECT_FALSE(source->tokenCount(Split::Train).has_value());
    EXPECT_TRUE(source->entropyFloorNats().has_value());
}

TEST(TokenSource, SameSeedSameBatchesWhateverTheCallOrder)
{
    auto a = synthetic();
    auto b = synthetic();
    std::vector<MicroBatch> forward;
    for (int i = 0; i < 6; ++i) {
        forward.push_back(a->batch(Split::Train, i, 4));
    }
    for (int i = 5; i >= 0; --i) { // another schedule asks in another order
        EXPECT_EQ(b->batch(Split::Train, i, 4), forward[static_cast<std::size_t>(i)]) << i;
    }
    EXPECT_NE(forward[0], forward[1]);
}

TEST(TokenSource, MicroBatchesTileTheSameSequencesAsOneBigBatch)
{
    auto source = synthetic();
    const MicroBatch global = source->batch(Split::Train, 1, 8); // sequences 8..15
    EXPECT_EQ(rows(global, 0, 4), source->batch(Split::Train, 2, 4));
    EXPECT_EQ(rows(global, 4, 4), source->batch(Split::Train, 3, 4));
}

TEST(TokenSource, SeedAndSplitChangeTheTokens)
{
    auto a = synthetic(1);
    auto b = synthetic(2);
    EXPECT_NE(a->batch(Split::Train, 0, 4), b->batch(Split::Train, 0, 4));
    EXPECT_NE(a->batch(Split::Train, 0, 4), a->batch(Split::Validation, 0, 4));
    EXPECT_NE(*a->entropyFloorNats(), *b->entropyFloorNats());
}

TEST(TokenSource, BadSpecsAreRejected)
{
    for (const char* spec : {"synth", "text:", "bin:", "csv:a.csv", ""}) {
        auto source = openTokenSource(spec, 256, 16, 1, 0.1);
        ASSERT_FALSE(source) << spec;
        EXPECT_EQ(source.error().code, ErrorCode::InvalidArgument);
        EXPECT_EQ(source.error().context, "data.spec");
    }
    EXPECT_EQ(openTokenSource("synthetic", 1, 16, 1, 0.1).error().context, "model.vocab");
    EXPECT_EQ(openTokenSource("synthetic", 256, 0, 1, 0.1).error().context, "model.seq_len");
    EXPECT_EQ(openTokenSource("synthetic", 256, 16, 1, 1.0).error().context, "data.val_fraction");
}

std::vector<std::uint16_t> markedTokens()
{
    // Train region 0..799 holds tokens < 100, the validation tail 800..999 tokens >= 100.
    std::vector<std::uint16_t> tokens(1000);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        tokens[i] = static_cast<std::uint16_t>(i < 800 ? i % 100 : 100 + i % 50);
    }
    return tokens;
}

TEST(WindowSource, WindowsStayInsideTheirSplitAndAreContiguous)
{
    auto source = WindowSource::create(markedTokens(), 256, 10, 7, 0.2, "test").value();
    EXPECT_EQ(source->tokenCount(Split::Train), 800);
    EXPECT_EQ(source->tokenCount(Split::Validation), 200);
    for (int i = 0; i < 50; ++i) {
        const MicroBatch train = source->batch(Split::Train, i, 4);
        const MicroBatch val = source->batch(Split::Validation, i, 4);
        EXPECT_TRUE(std::all_of(train.inputs.begin(), train.inputs.end(), [](int v) { return v < 100; }));
        EXPECT_TRUE(std::all_of(train.targets.begin(), train.targets.end(), [](int v) { return v < 100; }));
        EXPECT_TRUE(std::all_of(val.inputs.begin(), val.inputs.end(), [](int v) { return v >= 100; }));
        EXPECT_TRUE(std::all_of(val.targets.begin(), val.targets.end(), [](int v) { return v >= 100; }));
        for (std::size_t k = 0; k < train.inputs.size(); ++k) {
            EXPECT_EQ(train.targets[k], (train.inputs[k] + 1) % 100); // consecutive file tokens
        }
    }
}

TEST(WindowSource, ZeroValFractionGivesEmptyValidation)
{
    auto source = WindowSource::create(markedTokens(), 256, 10, 7, 0.0, "test").value();
    const MicroBatch val = source->batch(Split::Validation, 0, 4);
    EXPECT_EQ(val.batchSize, 0);
    EXPECT_TRUE(val.inputs.empty());
}

TEST(WindowSource, TooShortSplitsAreErrors)
{
    auto train = WindowSource::create(std::vector<std::uint16_t>(10, 1), 256, 10, 7, 0.0, "tiny.bin");
    ASSERT_FALSE(train);
    EXPECT_EQ(
        train.error().message, "tiny.bin has 10 training tokens (of 10); one sequence needs model.seq_len + 1 = 11");
    auto val = WindowSource::create(std::vector<std::uint16_t>(100, 1), 256, 10, 7, 0.05, "small.bin");
    ASSERT_FALSE(val);
    EXPECT_NE(val.error().message.find("has 5 validation tokens"), std::string::npos) << val.error().message;
}

} // namespace
} // namespace bs::runtime
