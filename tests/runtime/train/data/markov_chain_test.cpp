#include "runtime/train/data/markov_chain.h"

#include "runtime/train/data/counter_rng.h"
#include "runtime/train/data/synthetic_source.h"

#include <gtest/gtest.h>

#include <cmath>

namespace bs::runtime {
namespace {

TEST(MarkovChain, RowsAreDistributionsOverDistinctSuccessors)
{
    const MarkovChain chain(64, 8, 7);
    for (int i = 0; i < chain.vocab(); ++i) {
        double sum = 0.0;
        for (int j = 0; j < chain.branching(); ++j) {
            EXPECT_GT(chain.probability(i, j), 0.0);
            sum += chain.probability(i, j);
            for (int k = 0; k < j; ++k) {
                EXPECT_NE(chain.successor(i, j), chain.successor(i, k)) << "row " << i;
            }
        }
        EXPECT_NEAR(sum, 1.0, 1e-12);
        EXPECT_EQ(chain.successor(i, 0), (i + 1) % 64); // the cycle that makes it irreducible
    }
}

TEST(MarkovChain, StationaryDistributionIsAFixedPoint)
{
    const MarkovChain chain(256, 8, 1234);
    std::vector<double> next(256, 0.0);
    double total = 0.0;
    for (int i = 0; i < 256; ++i) {
        total += chain.stationary(i);
        for (int j = 0; j < chain.branching(); ++j) {
            next[static_cast<std::size_t>(chain.successor(i, j))] += chain.stationary(i) * chain.probability(i, j);
        }
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
    for (int i = 0; i < 256; ++i) {
        EXPECT_NEAR(next[static_cast<std::size_t>(i)], chain.stationary(i), 1e-12) << i;
    }
}

TEST(MarkovChain, EntropyRateMatchesTheDefinition)
{
    const MarkovChain chain(32, 4, 99);
    double rate = 0.0;
    for (int i = 0; i < 32; ++i) {
        for (int j = 0; j < 4; ++j) {
            const double p = chain.probability(i, j);
            rate -= chain.stationary(i) * p * std::log(p);
        }
    }
    EXPECT_NEAR(chain.entropyRateNats(), rate, 1e-12);
    EXPECT_GT(rate, 0.1);
    EXPECT_LT(rate, std::log(4.0) + 1e-12); // at most log(branching)
}

TEST(MarkovChain, SingleSuccessorIsDeterministicWithZeroEntropy)
{
    const MarkovChain chain(16, 1, 5);
    EXPECT_NEAR(chain.entropyRateNats(), 0.0, 1e-15);
    for (int i = 0; i < 16; ++i) {
        EXPECT_NEAR(chain.stationary(i), 1.0 / 16.0, 1e-12); // a pure cycle
    }
}

TEST(MarkovChain, SeedPicksTheChain)
{
    const MarkovChain a(128, 8, 1);
    const MarkovChain b(128, 8, 1);
    const MarkovChain c(128, 8, 2);
    EXPECT_EQ(a.entropyRateNats(), b.entropyRateNats());
    EXPECT_NE(a.entropyRateNats(), c.entropyRateNats());
    EXPECT_EQ(a.successor(10, 3), b.successor(10, 3));
}

TEST(SyntheticSource, EmpiricalLossOfTheTrueModelMatchesTheFloor)
{
    // The floor is only meaningful if the data really follows the chain from its stationary
    // distribution: the true model's mean cross-entropy on samples must converge to it.
    const SyntheticSource source(256, 64, 1234);
    const MarkovChain& chain = source.chain();
    double loss = 0.0;
    std::int64_t count = 0;
    for (int i = 0; i < 200; ++i) {
        const MicroBatch mb = source.batch(Split::Train, i, 8);
        for (std::size_t k = 0; k < mb.inputs.size(); ++k) {
            double p = 0.0;
            for (int j = 0; j < chain.branching(); ++j) {
                if (chain.successor(mb.inputs[k], j) == mb.targets[k]) {
                    p = chain.probability(mb.inputs[k], j);
                }
            }
            ASSERT_GT(p, 0.0) << "a transition the chain does not have";
            loss -= std::log(p);
            ++count;
        }
    }
    loss /= static_cast<double>(count);
    // 102400 targets; the per-target loss has std ~1, so the standard error is ~0.003.
    EXPECT_NEAR(loss, *source.entropyFloorNats(), 0.02);
    EXPECT_NEAR(*source.entropyFloorNats(), 1.7079, 1e-4); // documented in config_presets.cpp
}

TEST(CounterRng, UniformIsInUnitIntervalAndStreamsDiffer)
{
    CounterRng a(streamSeed(1, 2, 3));
    CounterRng b(streamSeed(1, 2, 4));
    int same = 0;
    for (int i = 0; i < 1000; ++i) {
        const double u = a.uniform();
        EXPECT_GE(u, 0.0);
        EXPECT_LT(u, 1.0);
        same += a.next() == b.next();
    }
    EXPECT_EQ(same, 0);
}

} // namespace
} // namespace bs::runtime
