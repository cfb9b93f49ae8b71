#pragma once
// A count per int key in one sorted vector: what std::map<int, int> does for the handful of
// weight versions a stage holds at once, without a heap allocation per key (a stashing schedule
// creates and retires one version per update, so the map allocated once per micro-batch and
// stage). Same semantics as the map where they are used: operator[] inserts a missing key with 0.

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace bs {

class FlatCountMap
{
public:
    /// The count of `key`, inserted as 0 when missing.
    int& operator[](int key)
    {
        auto it = lowerBound(key);
        if (it == m_entries.end() || it->first != key) {
            it = m_entries.insert(it, {key, 0});
        }
        return it->second;
    }
    /// The count of `key`, or nullptr when it has none.
    int* find(int key)
    {
        auto it = lowerBound(key);
        return it != m_entries.end() && it->first == key ? &it->second : nullptr;
    }
    bool contains(int key) const
    {
        auto it = std::lower_bound(
            m_entries.begin(), m_entries.end(), key, [](const std::pair<int, int>& e, int k) { return e.first < k; });
        return it != m_entries.end() && it->first == key;
    }
    void erase(int key)
    {
        if (auto it = lowerBound(key); it != m_entries.end() && it->first == key) {
            m_entries.erase(it);
        }
    }
    std::size_t size() const { return m_entries.size(); }
    /// (key, count) in key order.
    const std::vector<std::pair<int, int>>& entries() const { return m_entries; }
    /// Every key `by` up, its count kept (the order stays).
    void moveKeys(int by)
    {
        for (auto& entry : m_entries) {
            entry.first += by;
        }
    }

private:
    std::vector<std::pair<int, int>>::iterator lowerBound(int key)
    {
        return std::lower_bound(
            m_entries.begin(), m_entries.end(), key, [](const std::pair<int, int>& e, int k) { return e.first < k; });
    }
    std::vector<std::pair<int, int>> m_entries; // sorted by key
};

} // namespace bs
