#pragma once
// A plain-text table with right-aligned numeric columns, for terminal output.

#include <string>
#include <vector>

namespace bs::cli {

class Table
{
public:
    explicit Table(std::vector<std::string> header);
    void addRow(std::vector<std::string> row);
    std::string render() const;

private:
    std::vector<std::vector<std::string>> m_rows;
};

std::string fixed(double value, int decimals);
std::string percent(double fraction);
std::string bytesOrUnits(long long bytes, bool bytesKnown);

} // namespace bs::cli
