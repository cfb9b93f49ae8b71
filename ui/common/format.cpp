#include "ui/common/format.h"

#include <cmath>

namespace bs::ui {

namespace {
QString threeDigits(double v)
{
    const double a = std::fabs(v);
    const int decimals = a >= 100 ? 0 : (a >= 10 ? 1 : 2);
    return QString::number(v, 'f', decimals);
}
} // namespace

QString formatDuration(double ns)
{
    const double a = std::fabs(ns);
    if (a < 1e3) {
        return QString::number(std::llround(ns)) + QStringLiteral(" ns");
    }
    if (a < 1e6) {
        return threeDigits(ns / 1e3) + QStringLiteral(" µs");
    }
    if (a < 1e9) {
        return threeDigits(ns / 1e6) + QStringLiteral(" ms");
    }
    return threeDigits(ns / 1e9) + QStringLiteral(" s");
}

QString formatBytes(double bytes)
{
    const double a = std::fabs(bytes);
    if (a < 1024) {
        return QString::number(std::llround(bytes)) + QStringLiteral(" B");
    }
    if (a < 1024.0 * 1024) {
        return threeDigits(bytes / 1024) + QStringLiteral(" KiB");
    }
    if (a < 1024.0 * 1024 * 1024) {
        return threeDigits(bytes / (1024.0 * 1024)) + QStringLiteral(" MiB");
    }
    return threeDigits(bytes / (1024.0 * 1024 * 1024)) + QStringLiteral(" GiB");
}

QString formatPercent(double fraction)
{
    return QString::number(fraction * 100.0, 'f', 1) + QStringLiteral(" %");
}

} // namespace bs::ui
