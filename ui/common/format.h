#pragma once
// The only place std::string and QString meet (STYLE.md B.13), plus the UI's number formats.

#include "base/time.h"

#include <QString>
#include <QStringList>

#include <string>
#include <string_view>

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
/// A time-axis label at `ns` for ticks `stepNs` apart: the unit of the larger of the two, with
/// the decimals the step needs, so neighbouring ticks never read the same ("11.81 s", "11.82 s").
QString formatTimeTick(double ns, double stepNs);
/// "512 B", "1.5 KiB", "20.0 MiB", "1.25 GiB".
QString formatBytes(double bytes);
/// Run names that read apart: `labels` as they are, with " #n" (n = 1-based position) added to each
/// that another one equals (two runs of one schedule at the same a and b).
QStringList distinctLabels(QStringList labels);
/// "12.3 %" from a fraction in [0, 1].
QString formatPercent(double fraction);

} // namespace bs::ui
