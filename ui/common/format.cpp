#include "ui/common/format.h"

#include <algorithm>
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

QString formatTimeTick(double ns, double stepNs)
{
    const double scale = std::max(std::fabs(ns), std::fabs(stepNs));
    double unit = 1;
    QString name = QStringLiteral(" ns");
    if (scale >= 1e9) {
        unit = 1e9;
        name = QStringLiteral(" s");
    } else if (scale >= 1e6) {
        unit = 1e6;
        name = QStringLiteral(" ms");
    } else if (scale >= 1e3) {
        unit = 1e3;
        name = QStringLiteral(" µs");
    }
    const double step = std::fabs(stepNs) / unit;
    const int decimals = step > 0 ? std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6) : 0;
    return QString::number(ns / unit, 'f', decimals) + name;
}

QStringList distinctLabels(QStringList labels)
{
    const QStringList given = labels;
    for (qsizetype i = 0; i < given.size(); ++i) {
        if (given.count(given[i]) > 1) {
            labels[i] += QStringLiteral(" #%1").arg(i + 1);
        }
    }
    return labels;
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
