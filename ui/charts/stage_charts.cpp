#include "ui/charts/stage_charts.h"

#include "ui/charts/axis_ticks.h"
#include "ui/common/palette.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QFontMetrics>
#include <QLegend>
#include <QLineSeries>
#include <QPercentBarSeries>
#include <QResizeEvent>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

namespace bs::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double niceCeil(double v)
{
    if (v <= 0) {
        return 1.0;
    }
    const double magnitude = std::pow(10.0, std::floor(std::log10(v)));
    for (double m : {1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0}) {
        if (m * magnitude >= v * 1.05) {
            return m * magnitude;
        }
    }
    return 10.0 * magnitude;
}

double stackedMax(const std::vector<std::vector<double>>& values)
{
    double best = 0;
    const std::size_t stages = values.empty() ? 0 : values.front().size();
    for (std::size_t s = 0; s < stages; ++s) {
        double total = 0;
        for (const auto& set : values) {
            total += set[s];
        }
        best = std::max(best, total);
    }
    return best;
}

} // namespace

void styleChart(QChart* chart, const QString& title)
{
    chart->setTheme(QChart::ChartThemeLight);
    chart->setTitle(title);
    QFont f = chart->titleFont();
    f.setBold(true);
    f.setPointSizeF(StageBarChartView::kTitlePointSize);
    chart->setTitleFont(f);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignBottom);
    QFont lf = chart->legend()->font();
    lf.setPointSizeF(7.5);
    chart->legend()->setFont(lf);
    chart->legend()->setShowToolTips(true); // a label cut on a narrow screen shows in full on hover
    chart->setMargins(QMargins(4, 2, 4, 2));
    chart->setBackgroundRoundness(0);
}

StageBarChartView::StageBarChartView(QWidget* parent)
    : QChartView(parent)
{
    setRenderHint(QPainter::Antialiasing);
}

double StageBarChartView::stageTotal(int stage) const
{
    double total = 0;
    if (m_series) {
        const auto sets = m_series->barSets();
        for (QBarSet* set : sets) {
            total += stage < set->count() ? set->at(stage) : 0.0;
        }
    }
    return total;
}

void StageBarChartView::showBars(const Bars& bars, const std::optional<Line>& line)
{
    const int stages = bars.values.empty() ? 0 : static_cast<int>(bars.values.front().size());
    const bool sameShape = m_series && stages == m_stages && bars.names == m_names && bars.categories == m_categories
        && line.has_value() == m_hasLine && (!line || line->ownAxis == m_lineOwnAxis);
    m_yMax = bars.yMax;
    if (!sameShape) {
        rebuild(bars, line);
        m_fullTitle = bars.title;
        fitToWidth();
        return;
    }
    m_fullTitle = bars.title;
    fitToWidth();
    const auto sets = m_series->barSets();
    for (int i = 0; i < sets.size(); ++i) {
        const auto& values = bars.values[static_cast<std::size_t>(i)];
        for (int s = 0; s < stages; ++s) {
            sets[i]->replace(s, values[static_cast<std::size_t>(s)]);
        }
    }
    if (line) {
        m_line->replace(QList<QPointF>(line->points.begin(), line->points.end()));
        if (m_lineY) {
            m_lineY->setRange(0, line->axisMax);
            m_lineY->setTickCount(static_cast<int>(line->axisMax) + 1);
        }
    }
}

void StageBarChartView::rebuild(const Bars& bars, const std::optional<Line>& line)
{
    ++m_rebuilds;
    auto* c = new QChart(); // owned by the view after setChart
    styleChart(c, bars.title);
    QChart* old = chart();
    setChart(c);
    delete old;
    const int stages = bars.values.empty() ? 0 : static_cast<int>(bars.values.front().size());
    m_stages = stages;
    m_names = bars.names;
    m_categories = bars.categories;
    m_hasLine = line.has_value();
    m_lineOwnAxis = line && line->ownAxis;
    m_line = nullptr;
    m_lineY = nullptr;
    if (bars.kind == BarKind::Percent) {
        m_series = new QPercentBarSeries(c);
    } else {
        m_series = new QStackedBarSeries(c);
    }
    for (int i = 0; i < bars.names.size(); ++i) {
        auto* set = new QBarSet(bars.names[i], m_series);
        set->setColor(bars.colors[static_cast<std::size_t>(i)]);
        set->setBorderColor(bars.colors[static_cast<std::size_t>(i)]);
        for (double v : bars.values[static_cast<std::size_t>(i)]) {
            *set << v;
        }
        m_series->append(set);
    }
    m_series->setBarWidth(0.7);
    c->addSeries(m_series);
    auto* x = new QBarCategoryAxis(c);
    QStringList categories = bars.categories;
    for (int s = static_cast<int>(categories.size()); s < stages; ++s) {
        categories << QString::number(s);
    }
    x->append(categories);
    if (!bars.categories.isEmpty()) { // runs side by side: twice the bars in the same width
        QFont small = x->labelsFont();
        small.setPointSizeF(6.5);
        x->setLabelsFont(small);
    }
    x->setTitleText(laneWord());
    c->addAxis(x, Qt::AlignBottom);
    m_series->attachAxis(x);
    m_y = new QValueAxis(c);
    m_y->setTitleText(bars.yTitle);
    c->addAxis(m_y, Qt::AlignLeft); // ticks: fitToWidth()
    m_series->attachAxis(m_y);
    if (!line) {
        return;
    }
    m_line = new QLineSeries(c);
    m_line->setName(line->name);
    m_line->setPen(line->pen);
    m_line->setPointsVisible(line->ownAxis);
    m_line->replace(QList<QPointF>(line->points.begin(), line->points.end()));
    c->addSeries(m_line);
    // The category axis puts category i at x = i, so a hidden value axis over [-0.5, n-0.5] aligns.
    auto* lx = new QValueAxis(c);
    lx->setRange(-0.5, stages - 0.5);
    lx->setVisible(false);
    c->addAxis(lx, Qt::AlignBottom);
    m_line->attachAxis(lx);
    if (line->ownAxis) {
        m_lineY = new QValueAxis(c);
        m_lineY->setRange(0, line->axisMax);
        m_lineY->setTickCount(static_cast<int>(line->axisMax) + 1);
        m_lineY->setLabelFormat(QStringLiteral("%d"));
        m_lineY->setTitleText(line->axisTitle);
        c->addAxis(m_lineY, Qt::AlignRight);
        m_line->attachAxis(m_lineY);
    } else {
        m_line->attachAxis(m_y);
    }
}

std::pair<StageBarChartView::Bars, std::optional<StageBarChartView::Line>> StageBarChartView::sideBySide(
    const std::vector<std::pair<Bars, std::optional<Line>>>& runs, const QString& title)
{
    Bars out;
    if (runs.empty()) {
        return {out, std::nullopt};
    }
    const Bars& first = runs.front().first;
    out.title = title;
    out.yTitle = first.yTitle;
    out.kind = first.kind;
    for (const auto& [bars, line] : runs) { // the union of the sets, in first-seen order
        for (int i = 0; i < bars.names.size(); ++i) {
            if (!out.names.contains(bars.names[i])) {
                out.names << bars.names[i];
                out.colors.push_back(bars.colors[static_cast<std::size_t>(i)]);
            }
        }
        out.yMax = std::max(out.yMax, bars.yMax);
    }
    const int k = static_cast<int>(runs.size());
    std::size_t stages = 0;
    for (const auto& run : runs) {
        stages = std::max(stages, run.first.values.empty() ? std::size_t{0} : run.first.values.front().size());
    }
    out.values.assign(
        static_cast<std::size_t>(out.names.size()), std::vector<double>(stages * static_cast<std::size_t>(k), 0.0));
    for (std::size_t st = 0; st < stages; ++st) {
        for (int r = 0; r < k; ++r) {
            // The first bar of each stage carries its number ("3a" / "3b" would not fit on a
            // laptop screen); categories must differ, so each other bar's label is a distinct
            // count of zero-width spaces, drawn as nothing.
            const auto position = static_cast<qsizetype>(st) * k + r;
            out.categories << (r == 0 ? QString::number(st) : QString(position, QChar(0x200B)));
        }
    }
    std::optional<Line> line;
    for (int r = 0; r < k; ++r) {
        const auto& [bars, runLine] = runs[static_cast<std::size_t>(r)];
        for (int i = 0; i < bars.names.size(); ++i) {
            auto& target = out.values[static_cast<std::size_t>(out.names.indexOf(bars.names[i]))];
            const auto& values = bars.values[static_cast<std::size_t>(i)];
            for (std::size_t st = 0; st < values.size(); ++st) {
                target[st * static_cast<std::size_t>(k) + static_cast<std::size_t>(r)] = values[st];
            }
        }
        if (!runLine) {
            continue;
        }
        if (!line) {
            line = runLine;
            line->points.clear();
        }
        line->axisMax = std::max(line->axisMax, runLine->axisMax);
        for (const QPointF& p : runLine->points) { // stage x -> its bar's position (lines over the axis span it)
            const double x =
                p.x() < 0 ? -0.5 : (p.x() >= static_cast<double>(stages) - 0.5 ? k * stages - 0.5 : p.x() * k + r);
            line->points.emplace_back(x, p.y());
        }
    }
    if (line) {
        std::stable_sort(
            line->points.begin(), line->points.end(), [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
    }
    return {out, line};
}

QString StageBarChartView::laneWord() const
{
    return m_perRank ? tr("rank") : tr("stage");
}

void StageBarChartView::showRuns(
    const std::vector<StageChartData>& runs, std::pair<Bars, std::optional<Line>> (*barsOf)(const StageChartData&))
{
    // Ranks holding several stages: a bar is a rank, over all the stages (chunks) it holds.
    m_perRank = std::any_of(runs.begin(), runs.end(), [](const StageChartData& r) { return r.perRank; });
    if (runs.size() == 1) {
        const auto [bars, line] = barsOf(runs.front());
        showBars(bars, line);
        return;
    }
    std::vector<std::pair<Bars, std::optional<Line>>> each;
    const QStringList tags = runTags(runs);
    QStringList titles;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        each.push_back(barsOf(runs[i]));
        titles << tags.value(static_cast<qsizetype>(i)) + QStringLiteral(": ") + runs[i].title;
    }
    const QString kind = each.empty() ? QString() : each.front().first.title.section(QStringLiteral(" · "), 0, 0);
    const QString title = kind + QStringLiteral(" · ") + titles.join(QStringLiteral(", "));
    const auto [bars, line] = sideBySide(each, title);
    showBars(bars, line);
    setToolTip(title + tr(" (at each stage: left bar a, right bar b)")); // the title elides on a narrow window
}

void StageBarChartView::resizeEvent(QResizeEvent* event)
{
    QChartView::resizeEvent(event);
    fitToWidth();
}

void StageBarChartView::fitToWidth()
{
    QChart* c = chart();
    if (c == nullptr) {
        return;
    }
    const int room = width() - 12;
    // The title at its house size when the kind of chart fits, else smaller until it does (Qt
    // elided "Bubbles by cause" to "Bubbles by ca..." at 150 px).
    QFont titleFont = c->titleFont();
    titleFont.setPointSizeF(kTitlePointSize);
    const QString kind = m_fullTitle.section(QStringLiteral(" · "), 0, 0);
    const int titleRoom = room - 16; // the title's text item keeps a 4 px margin inside the chart's own
    while (titleFont.pointSizeF() > 6.5 && QFontMetrics(titleFont).horizontalAdvance(kind) > titleRoom) {
        titleFont.setPointSizeF(titleFont.pointSizeF() - 0.5);
    }
    c->setTitleFont(titleFont);
    const QFontMetrics titleMetrics(titleFont);
    c->setTitle(titleMetrics.horizontalAdvance(m_fullTitle) <= titleRoom ? m_fullTitle : kind);
    // Qt Charts gives the value axes at most 40 % of the width between them and elides what does
    // not fit, a rotated axis title first ("% share" became "…"). Below that room the titles go
    // (the tooltip names them) and the tick labels, drawn whole, stay.
    const auto vertical = c->axes(Qt::Vertical);
    int shownVertical = 0;
    for (QAbstractAxis* axis : vertical) {
        shownVertical += axis->isVisible() ? 1 : 0;
    }
    const double perAxis = shownVertical > 0 ? 0.4 * room / shownVertical : room;
    QStringList axisTitles;
    for (QAbstractAxis* axis : vertical) {
        const QFontMetrics labels(axis->labelsFont());
        const QFontMetrics titles(axis->titleFont());
        const int needed = labels.horizontalAdvance(QStringLiteral("100")) + titles.height() + kAxisPaddingPx;
        const bool fits = perAxis >= needed;
        axis->setTitleVisible(fits);
        if (!fits && !axis->titleText().isEmpty()) {
            axisTitles << (axis->alignment() == Qt::AlignRight ? tr("right axis: %1") : tr("left axis: %1"))
                              .arg(axis->titleText());
        }
    }
    m_axisNote = axisTitles.join(QStringLiteral("; "));
    if (m_y != nullptr) { // round ticks, as many as the height has room for (not 0/13/25/38)
        applyNiceTicks(m_y, 0, m_yMax, std::max(60, height() - 110));
    }
    // The legend needs about 90 px an entry at its 7.5 pt font; below that Qt elides every entry.
    c->legend()->setVisible(room >= 90 * static_cast<int>(m_names.size() + (m_hasLine ? 1 : 0)));
    // Stage numbers under ~12 px a bar would all be drawn as "…": hide them and say the order in
    // the axis title instead.
    for (QAbstractAxis* axis : c->axes()) {
        // Qt Charts elides an axis label or title as soon as its estimate of the room runs short
        // (a "0" under a 10 px bar became "…"); our labels are short enough to be drawn whole.
        axis->setTruncateLabels(false);
    }
    for (QAbstractAxis* axis : c->axes(Qt::Horizontal)) {
        if (auto* x = qobject_cast<QBarCategoryAxis*>(axis); x != nullptr && x->count() > 0) {
            const bool fits = room * 0.75 / x->count() >= 8.0;
            x->setLabelsVisible(fits);
            // Side by side, only the first bar of a stage is labelled with a digit.
            const auto stages = m_categories.isEmpty()
                ? m_stages
                : static_cast<int>(std::count_if(m_categories.begin(), m_categories.end(),
                    [](const QString& label) { return !label.isEmpty() && label.front().isDigit(); }));
            // Hidden numbers: the tooltip says the order (Qt cut the title "stage 0 → 7" to "…"
            // under 16 narrow bars), and the title goes with them.
            x->setTitleText(laneWord());
            if (!fits && stages > 0) {
                m_axisNote += (m_axisNote.isEmpty() ? QString() : QStringLiteral("; "))
                    + tr("bottom axis: %1 0 → %2").arg(laneWord()).arg(stages - 1);
            }
            // Not even the title fits under the bars: the tooltip says it instead.
            const bool titleFits =
                fits && QFontMetrics(x->titleFont()).horizontalAdvance(x->titleText()) <= room * 0.75;
            x->setTitleVisible(titleFits);
            if (!titleFits && fits) {
                m_axisNote += (m_axisNote.isEmpty() ? QString() : QStringLiteral("; "))
                    + tr("bottom axis: %1").arg(x->titleText());
            }
        }
    }
    if (toolTip().isEmpty() || !toolTip().startsWith(m_fullTitle)) {
        setToolTip(m_fullTitle);
    }
    QString tip = toolTip();
    if (const auto at = tip.indexOf(QStringLiteral(" [")); at >= 0) {
        tip.truncate(at); // the note of an earlier width
    }
    setToolTip(m_axisNote.isEmpty() ? tip : tip + QStringLiteral(" [") + m_axisNote + QStringLiteral("]"));
}

QString StageBarChartView::shownTitle() const
{
    return chart() ? chart()->title() : QString();
}

QStringList runTags(const std::vector<StageChartData>& runs)
{
    QStringList tags;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        tags << QString(QChar(u'a' + static_cast<char16_t>(i % 26)));
    }
    return tags;
}

BubbleChartView::BubbleChartView(QWidget* parent)
    : StageBarChartView(parent)
{
    setData({});
}

std::pair<StageBarChartView::Bars, std::optional<StageBarChartView::Line>> BubbleChartView::barsOf(
    const StageChartData& input)
{
    Bars bars;
    bars.title = tr("Bubbles by cause · %1").arg(input.title);
    bars.yTitle = tr("% idle");
    const double makespan = static_cast<double>(std::max<profiler::TimeNs>(1, input.report.makespan));
    for (int c = 0; c < profiler::kBubbleCauseCount; ++c) {
        const auto cause = static_cast<profiler::BubbleCause>(c);
        std::vector<double> values;
        bool any = false;
        for (const auto& stage : input.report.perStage) {
            const double v = 100.0 * static_cast<double>(stage.idleByCause[static_cast<std::size_t>(c)]) / makespan;
            any = any || v > 0;
            values.push_back(v);
        }
        if (any) {
            bars.names << bubbleCauseLabel(cause);
            bars.colors.push_back(bubbleCauseColor(cause));
            bars.values.push_back(std::move(values));
        }
    }
    if (bars.values.empty()) { // keep the stage axis even when nothing idles
        bars.names << bubbleCauseLabel(profiler::BubbleCause::Dependency);
        bars.colors.push_back(bubbleCauseColor(profiler::BubbleCause::Dependency));
        bars.values.emplace_back(input.report.perStage.size(), 0.0);
    }
    bars.yMax = niceCeil(std::max(1.0, stackedMax(bars.values)));
    std::optional<Line> line;
    return {bars, line};
}

void BubbleChartView::setData(const StageChartData& input)
{
    setRuns({input});
}

void BubbleChartView::setRuns(const std::vector<StageChartData>& runs)
{
    showRuns(runs, &BubbleChartView::barsOf);
}

MemoryChartView::MemoryChartView(QWidget* parent)
    : StageBarChartView(parent)
{
    setData({});
}

std::pair<StageBarChartView::Bars, std::optional<StageBarChartView::Line>> MemoryChartView::barsOf(
    const StageChartData& input)
{
    Bars bars;
    bars.title = tr("Peak memory · %1").arg(input.title);
    bars.yTitle = tr("MiB");
    bars.names = QStringList{tr("weights+opt"), tr("stash"), tr("activations")};
    bars.colors = {QColor(0x64, 0x74, 0x8b), QColor(0xa7, 0x8b, 0xfa), QColor(0x38, 0xbd, 0xf8)};
    bars.values.assign(3, {});
    if (!input.memoryKnown) {
        bars.title = tr("Peak memory: not in the trace");
    }
    for (std::size_t s = 0; s < input.report.perStage.size(); ++s) {
        const auto& st = input.report.perStage[s];
        if (!input.memoryKnown) {
            for (auto& series : bars.values) {
                series.push_back(0.0);
            }
            continue;
        }
        const auto at = [s](const std::vector<std::int64_t>& v) {
            return s < v.size() ? static_cast<double>(v[s]) : 0.0;
        };
        const double total = static_cast<double>(st.peakMemoryBytes);
        const double w = std::min(total, at(input.staticBytes));
        const double k = std::min(total - w, std::max(0, st.peakWeightVersions - 1) * at(input.paramBytes));
        bars.values[0].push_back(w / kMiB);
        bars.values[1].push_back(k / kMiB);
        bars.values[2].push_back(std::max(0.0, total - w - k) / kMiB);
    }
    const double budget = static_cast<double>(input.memoryBudgetBytes) / kMiB;
    const double maxTotal = stackedMax(bars.values);
    bars.yMax = niceCeil(std::max({1.0, maxTotal, budget}));
    std::optional<Line> line;
    if (budget > 0) {
        line.emplace();
        line->name = tr("budget");
        QPen pen(palette::budgetLine());
        pen.setWidthF(2);
        pen.setStyle(Qt::DashLine);
        line->pen = pen;
        const double n = static_cast<double>(input.report.perStage.size());
        line->points = {QPointF(-0.5, budget), QPointF(n - 0.5, budget)};
    }
    return {bars, line};
}

void MemoryChartView::setData(const StageChartData& input)
{
    setRuns({input});
}

void MemoryChartView::setRuns(const std::vector<StageChartData>& runs)
{
    showRuns(runs, &MemoryChartView::barsOf);
}

LagChartView::LagChartView(QWidget* parent)
    : StageBarChartView(parent)
{
    setData({});
}

std::pair<StageBarChartView::Bars, std::optional<StageBarChartView::Line>> LagChartView::barsOf(
    const StageChartData& input)
{
    Bars bars;
    bars.title = tr("Version lag · %1").arg(input.title);
    bars.yTitle = tr("% share");
    bars.kind = BarKind::Percent;
    int maxLag = 0;
    for (const auto& st : input.report.perStage) {
        for (const auto& [lag, count] : st.versionLagHistogram) {
            if (count > 0) {
                maxLag = std::max(maxLag, lag);
            }
        }
    }
    const QColor lagColors[] = {
        QColor(0x86, 0xef, 0xac), QColor(0xfb, 0xbf, 0x24), QColor(0xf9, 0x73, 0x16), QColor(0xdc, 0x26, 0x26)};
    for (int lag = 0; lag <= maxLag; ++lag) {
        bars.names << tr("lag %1").arg(lag);
        bars.colors.push_back(lagColors[std::min(lag, 3)]);
        std::vector<double> values;
        for (const auto& st : input.report.perStage) {
            const auto it = st.versionLagHistogram.find(lag);
            values.push_back(it == st.versionLagHistogram.end() ? 0.0 : static_cast<double>(it->second));
        }
        bars.values.push_back(std::move(values));
    }
    bars.yMax = 100;
    std::optional<Line> line;
    if (!input.lagBound.empty()) {
        line.emplace();
        line->name = tr("bound ⌈(p−s−1)/a⌉");
        QPen pen(QColor(0x1f, 0x29, 0x37));
        pen.setWidthF(2);
        line->pen = pen;
        line->ownAxis = true;
        line->axisTitle = tr("updates");
        int maxBound = 0;
        for (std::size_t s = 0; s < input.lagBound.size() && s < input.report.perStage.size(); ++s) {
            maxBound = std::max(maxBound, input.lagBound[s]);
            line->points.emplace_back(static_cast<double>(s), input.lagBound[s]);
        }
        line->axisMax = std::max(maxBound, maxLag) + 1;
    }
    return {bars, line};
}

void LagChartView::setData(const StageChartData& input)
{
    setRuns({input});
}

void LagChartView::setRuns(const std::vector<StageChartData>& runs)
{
    showRuns(runs, &LagChartView::barsOf);
}

} // namespace bs::ui
