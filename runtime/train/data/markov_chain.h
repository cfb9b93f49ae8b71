#pragma once
// A random order-1 Markov chain over `vocab` tokens, sparse: each token has `branching` successors
// with Dirichlet(1) probabilities, one of them always token+1 (mod vocab) so the chain is
// irreducible. Its stationary distribution and entropy rate are computed, not estimated.

#include <cstdint>
#include <vector>

namespace bs::runtime {

class CounterRng;

class MarkovChain
{
public:
    /// Builds the chain for `seed`. vocab >= 2; branching is clamped to [1, vocab].
    MarkovChain(int vocab, int branching, std::uint64_t seed);

    int vocab() const { return m_vocab; }
    int branching() const { return m_branching; }

    /// P(next = successor(token, j) | token), j in [0, branching).
    std::int32_t successor(int token, int j) const { return m_next[index(token, j)]; }
    double probability(int token, int j) const;
    /// Stationary probability of `token`.
    double stationary(int token) const { return m_stationary[static_cast<std::size_t>(token)]; }

    /// Entropy rate sum_i pi_i * H(P(.|i)) in nats: the expected cross-entropy of the best
    /// possible predictor on sequences started in the stationary distribution.
    double entropyRateNats() const { return m_entropyRate; }

    /// Draws a token from the stationary distribution, then the next token given `token`.
    std::int32_t sampleStationary(CounterRng& rng) const;
    std::int32_t sampleNext(int token, CounterRng& rng) const;

private:
    std::size_t index(int token, int j) const
    {
        return static_cast<std::size_t>(token) * static_cast<std::size_t>(m_branching) + static_cast<std::size_t>(j);
    }
    void computeStationary();

    int m_vocab;
    int m_branching;
    std::vector<std::int32_t> m_next; ///< (vocab, branching) successor ids
    std::vector<double> m_cumulative; ///< (vocab, branching) running sums; the last of a row is 1
    std::vector<double> m_stationary; ///< (vocab)
    std::vector<double> m_stationaryCumulative;
    double m_entropyRate = 0.0;
};

} // namespace bs::runtime
