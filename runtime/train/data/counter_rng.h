#pragma once
// Counter-based randomness: every (seed, stream, counter) maps to its own generator, so a value can
// be drawn for any micro-batch without drawing the ones before it (order-free determinism).

#include <cstdint>

namespace bs::runtime {

/// SplitMix64's finaliser: a bijective 64-bit mix with good avalanche.
constexpr std::uint64_t mix64(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/// A seed for the generator of (seed, stream, counter).
constexpr std::uint64_t streamSeed(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter)
{
    return mix64(mix64(mix64(seed) ^ stream) + counter);
}

/// SplitMix64 generator. Not cryptographic; fast and well distributed for sampling.
class CounterRng
{
public:
    explicit constexpr CounterRng(std::uint64_t seed)
        : m_state(seed)
    {}

    constexpr std::uint64_t next()
    {
        m_state += 0x9e3779b97f4a7c15ULL;
        return mix64(m_state);
    }

    /// Uniform in [0, 1) with 53 random bits.
    constexpr double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    /// Uniform in [0, n) for n >= 1 (modulo bias below 2^-40 for n < 2^24).
    constexpr std::uint64_t below(std::uint64_t n) { return next() % n; }

private:
    std::uint64_t m_state;
};

} // namespace bs::runtime
