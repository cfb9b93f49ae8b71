#pragma once
// The only place std::string and QString meet (STYLE.md B.13), plus the UI's number formats.

#include <QString>

#include <string>
#include <string_view>

#include "base/time.h"

namespace bs::ui {

inline QString toQt(std::string_view s)
{
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}
inline std::string fromQt(const QString& s)
{
    return s.toStdString();
}

/// "850 ns", "12.5 µs", "3.20 ms", "1.25 s": three significant digits, unit chosen by magnitude.
QString formatDuration(double ns);
/// "512 B", "1.5 KiB", "20.0 MiB", "1.25 GiB".
QString formatBytes(double bytes);
/// "12.3 %" from a fraction in [0, 1].
QString formatPercent(double fraction);

} // namespace bs::ui
