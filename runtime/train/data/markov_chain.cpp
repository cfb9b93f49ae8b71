#include "runtime/train/data/markov_chain.h"

#include "runtime/train/data/counter_rng.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_set>

namespace bs::runtime {

namespace {
constexpr std::uint64_t kChainStream = 0x636861696e; // "chain"
} // namespace

MarkovChain::MarkovChain(int vocab, int branching, std::uint64_t seed)
    : m_vocab(std::max(vocab, 2))
    , m_branching(std::clamp(branching, 1, m_vocab))
{
    const auto v = static_cast<std::size_t>(m_vocab);
    const auto k = static_cast<std::size_t>(m_branching);
    m_next.resize(v * k);
    m_cumulative.resize(v * k);
    m_entropyRate = 0.0;
    std::vector<double> rowEntropy(v);
    for (int token = 0; token < m_vocab; ++token) {
        CounterRng rng(streamSeed(seed, kChainStream, static_cast<std::uint64_t>(token)));
        std::unordered_set<std::int32_t> used;
        std::vector<double> weights(k);
        for (int j = 0; j < m_branching; ++j) {
            std::int32_t next = (token + 1) % m_vocab; // j == 0: the cycle that makes it irreducible
            while (j > 0 && used.count(next)) {
                next = static_cast<std::int32_t>(rng.below(v));
            }
            used.insert(next);
            m_next[index(token, j)] = next;
            // Exponential(1) weights, normalised below: a Dirichlet(1) row. 1 - u is in (0, 1].
            weights[static_cast<std::size_t>(j)] = -std::log(1.0 - rng.uniform());
        }
        const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
        double running = 0.0;
        double h = 0.0;
        for (std::size_t j = 0; j < k; ++j) {
            const double p = weights[j] / total;
            h -= p > 0.0 ? p * std::log(p) : 0.0;
            running += p;
            m_cumulative[static_cast<std::size_t>(token) * k + j] = running;
        }
        m_cumulative[static_cast<std::size_t>(token) * k + k - 1] = 1.0; // sampling never falls off the end
        rowEntropy[static_cast<std::size_t>(token)] = h;
    }
    computeStationary();
    for (std::size_t i = 0; i < v; ++i) {
        m_entropyRate += m_stationary[i] * rowEntropy[i];
    }
}

double MarkovChain::probability(int token, int j) const
{
    const std::size_t i = index(token, j);
    return j == 0 ? m_cumulative[i] : m_cumulative[i] - m_cumulative[i - 1];
}

void MarkovChain::computeStationary()
{
    // Power iteration on the lazy chain (P + I) / 2: same stationary distribution as P, and it
    // converges for any irreducible P, periodic or not.
    const auto v = static_cast<std::size_t>(m_vocab);
    std::vector<double> pi(v, 1.0 / static_cast<double>(v));
    std::vector<double> next(v);
    for (int iter = 0; iter < 200000; ++iter) {
        std::fill(next.begin(), next.end(), 0.0);
        for (int token = 0; token < m_vocab; ++token) {
            const double mass = pi[static_cast<std::size_t>(token)];
            for (int j = 0; j < m_branching; ++j) {
                next[static_cast<std::size_t>(successor(token, j))] += mass * probability(token, j);
            }
        }
        double change = 0.0;
        for (std::size_t i = 0; i < v; ++i) {
            next[i] = 0.5 * (next[i] + pi[i]);
            change += std::abs(next[i] - pi[i]);
        }
        pi.swap(next);
        if (change < 1e-14) {
            break;
        }
    }
    const double total = std::accumulate(pi.begin(), pi.end(), 0.0);
    m_stationary.resize(v);
    m_stationaryCumulative.resize(v);
    double running = 0.0;
    for (std::size_t i = 0; i < v; ++i) {
        m_stationary[i] = pi[i] / total;
        running += m_stationary[i];
        m_stationaryCumulative[i] = running;
    }
    m_stationaryCumulative.back() = 1.0;
}

std::int32_t MarkovChain::sampleStationary(CounterRng& rng) const
{
    const double u = rng.uniform();
    const auto it = std::upper_bound(m_stationaryCumulative.begin(), m_stationaryCumulative.end(), u);
    return static_cast<std::int32_t>(std::min<std::ptrdiff_t>(it - m_stationaryCumulative.begin(), m_vocab - 1));
}

std::int32_t MarkovChain::sampleNext(int token, CounterRng& rng) const
{
    const double u = rng.uniform();
    const std::size_t row = index(token, 0);
    for (int j = 0; j < m_branching; ++j) {
        if (u < m_cumulative[row + static_cast<std::size_t>(j)]) {
            return m_next[row + static_cast<std::size_t>(j)];
        }
    }
    return m_next[row + static_cast<std::size_t>(m_branching - 1)];
}

} // namespace bs::runtime
