#include "app/cli/table.h"

#include <algorithm>
#include <cstdio>

namespace bs::cli {

Table::Table(std::vector<std::string> header) { m_rows.push_back(std::move(header)); }

void Table::addRow(std::vector<std::string> row) { m_rows.push_back(std::move(row)); }

std::string Table::render() const
{
    std::vector<std::size_t> width;
    for (const auto& row : m_rows) {
        width.resize(std::max(width.size(), row.size()), 0);
        for (std::size_t c = 0; c < row.size(); ++c) {
            width[c] = std::max(width[c], row[c].size());
        }
    }
    std::string out;
    for (std::size_t r = 0; r < m_rows.size(); ++r) {
        for (std::size_t c = 0; c < m_rows[r].size(); ++c) {
            const auto& cell = m_rows[r][c];
            const std::string pad(width[c] - cell.size(), ' ');
            out += c == 0 ? cell + pad : "  " + pad + cell; // first column left, the rest right
        }
        out += '\n';
        if (r == 0) {
            std::size_t total = 0;
            for (auto w : width) {
                total += w + 2;
            }
            out += std::string(total - 2, '-') + '\n';
        }
    }
    return out;
}

std::string fixed(double value, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string percent(double fraction) { return fixed(fraction * 100.0, 2) + " %"; }

std::string bytesOrUnits(long long bytes, bool bytesKnown)
{
    if (!bytesKnown) {
        return std::to_string(bytes) + " mb";
    }
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024.0 && u < 4) {
        v /= 1024.0;
        ++u;
    }
    return fixed(v, u == 0 ? 0 : 1) + " " + units[u];
}

} // namespace bs::cli
