// TuningPanel's Suggest: the search (runtime::tune) over a and b at the panel's settings, ranked
// by predicted time to target where the runs on screen measured a noise scale (else by steady
// throughput), its table, and one-click apply of a row.
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/limits.h"
#include "ui/common/format.h"
#include "ui/tuning/tuning_panel.h"

#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <utility>

namespace bs::ui {

int fewestAcceptedFrom(const runtime::ScheduleInfo& info, int p, int m)
{
    while (m < runtime::limits::kMaxMicrobatches && !info.acceptsMicrobatches(p, m, 0)) {
        ++m;
    }
    return m;
}

QWidget* TuningPanel::buildSuggest()
{
    auto* box = new QGroupBox(tr("Suggest (a, b)"), this);
    auto* v = new QVBoxLayout(box);
    auto* row = new QHBoxLayout();
    row->addWidget(new QLabel(tr("max drift"), box));
    m_maxLag = new QSpinBox(box);
    m_maxLag->setObjectName(QStringLiteral("maxLagSpin"));
    m_maxLag->setRange(0, 16);
    m_maxLag->setValue(1);
    m_maxLag->setSuffix(tr(" update(s)"));
    row->addWidget(m_maxLag, 1);
    m_suggestButton = new QPushButton(tr("Suggest"), box);
    row->addWidget(m_suggestButton);
    v->addLayout(row);
    row = new QHBoxLayout(); // its own row: beside max drift the panel outgrows a laptop's width
    row->addWidget(new QLabel(tr("target loss"), box));
    m_targetLoss = new QDoubleSpinBox(box);
    m_targetLoss->setObjectName(QStringLiteral("targetLossSpin"));
    m_targetLoss->setRange(0.0, 100.0);
    m_targetLoss->setDecimals(2);
    m_targetLoss->setSingleStep(0.1);
    m_targetLoss->setSpecialValueText(tr("none"));
    m_targetLoss->setToolTip(tr("Validation loss to reach. With runs that reached it, times are in seconds; "
                                "without, relative to the best row"));
    row->addWidget(m_targetLoss, 1);
    v->addLayout(row);
    // A target a run reached fits E_min: the what-if's time to target turns into seconds.
    connect(m_targetLoss, &QDoubleSpinBox::valueChanged, this, [this] {
        if (refreshStatistics()) {
            emitChanged();
        }
    });
    m_suggestFitWarning = makeFitWarning(box);
    v->addWidget(m_suggestFitWarning);
    m_suggestions = new QTableWidget(0, kSuggestColumns, box);
    m_suggestions->setHorizontalHeaderLabels({tr("a"), tr("b"), tr("seq/s"), tr("efficiency"), tr("staleness"),
        tr("time to target"), tr("memory"), tr("lag")});
    m_suggestions->horizontalHeaderItem(kColThroughput)->setToolTip(tr("Predicted steady throughput"));
    m_suggestions->horizontalHeaderItem(kColEfficiency)
        ->setToolTip(tr("Statistical efficiency 1/(1 + B/B_noise) of the batch per update"));
    m_suggestions->horizontalHeaderItem(kColStaleness)->setToolTip(tr("Samples factor of the lag ((1 + c)^lag)"));
    m_suggestions->horizontalHeaderItem(kColTimeToTarget)
        ->setToolTip(tr("Predicted time to target ± one standard deviation"));
    m_suggestions->horizontalHeaderItem(kColLag)->setToolTip(tr("Most updates a micro-batch crosses"));
    m_suggestions->verticalHeader()->hide();
    m_suggestions->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_suggestions->setWordWrap(false);
    // Eight columns in a laptop-wide panel: each as wide as its figures, and the table scrolls
    // sideways past the last ones rather than squeezing a and b, which come first.
    m_suggestions->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_suggestions->horizontalHeader()->setStretchLastSection(true);
    m_suggestions->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    m_suggestions->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_suggestions->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_suggestions->setToolTip(tr("Double-click a row to apply it"));
    v->addWidget(m_suggestions, 1);
    m_suggestStatus = new QLabel(box);
    m_suggestStatus->setWordWrap(true);
    m_suggestStatus->setStyleSheet(QStringLiteral("color: #6b7280;"));
    v->addWidget(m_suggestStatus);
    connect(m_suggestButton, &QPushButton::clicked, this, &TuningPanel::suggest);
    connect(m_suggestions, &QTableWidget::cellDoubleClicked, this, [this](int r, int) { applySuggestion(r); });
    return box;
}

bool TuningPanel::isSearching() const
{
    return m_search->isRunning();
}

void TuningPanel::suggest()
{
    if (m_search->isRunning()) {
        // The running search may predate what changed since (a run opened, a recalibration):
        // search again when it ends, so the table follows the latest press.
        m_suggestAgain = true;
        return;
    }
    m_suggested = true;
    m_suggestAgain = false;
    if (refreshStatistics()) { // a live run's noise scale as measured up to now
        emitChanged(); // the what-if's headline follows too
    }
    const WhatIfConfig c = config();
    auto scenario = scenarioFor(c, c.schedule());
    if (!scenario) {
        m_suggestStatus->setText(toQt(scenario.error().describe()));
        return;
    }
    QString why;
    runtime::TuneRequest request = suggestRequest(c, *scenario, &why);
    m_suggestObjective = request.objective;
    m_suggestSeconds = request.goodput && request.goodput->hasSamplesMin();
    m_suggestModel = request.goodput ? toQt(request.goodput->describe()) : why;
    m_suggestSource = sourceText();
    if (const runtime::ScheduleInfo* info = runtime::findSchedule(c.schedule()); info && info->multiStage()) {
        // Suggest searches a and b at the panel's v (and the schedule's placement).
        m_suggestSource += tr("; at v = %1, %2 placement").arg(m_stagesPerRank->value()).arg(m_placement->text());
    }
    m_suggestButton->setEnabled(false);
    m_suggestStatus->setText(tr("searching…"));
    m_search->setFuture(QtConcurrent::run([request] { return runtime::tune(request); }));
}

runtime::TuneRequest TuningPanel::suggestRequest(
    const WhatIfConfig& c, runtime::GptScenario scenario, QString* why) const
{
    runtime::TuneRequest request;
    request.base = std::move(scenario);
    if (const runtime::ScheduleInfo* info = runtime::findSchedule(c.schedule()); info && !info->takesAccumWindow()) {
        // a = m: search the m its rules take nearest above each usual a (interleaved at p = 3:
        // 3, 6, 9, 18, 33), so every row listed is a setting this schedule runs.
        std::vector<int> accepted;
        for (int usual : request.accumValues) {
            const int a = fewestAcceptedFrom(*info, request.base.stages, usual);
            if (std::find(accepted.begin(), accepted.end(), a) == accepted.end()) {
                accepted.push_back(a);
            }
        }
        request.accumValues = std::move(accepted);
    }
    request.maxLag = m_maxLag->value();
    // The steady state, never a fixed count of batches: a longer window amortises the warm-up
    // over more work and would always win (issue 30).
    request.steadyState = true;
    request.memoryBudgetBytes = c.memoryBudgetBytes;
    if (c.calibration) { // rank by what this machine measured, exactly as the slider predictions do
        request.calibration = c.calibration->fitFor(c.schedule());
    }
    if (c.goodput) { // the statistics the config carries (config(): refreshStatistics()'s model)
        request.goodput = *c.goodput;
    }
    request.objective = runtime::defaultObjective(request.goodput.has_value());
    if (why && !request.goodput) {
        *why = tr("ranked by steady throughput: %1").arg(m_goodputWhy);
    }
    return request;
}

void TuningPanel::setStatisticsRuns(StatisticsRuns runs)
{
    m_statisticsRuns = std::move(runs);
    refreshStatistics();
}

bool TuningPanel::refreshStatistics()
{
    const std::optional<double> target =
        m_targetLoss->value() > m_targetLoss->minimum() ? std::optional<double>(m_targetLoss->value()) : std::nullopt;
    // In memory, no file read: the runs on screen hold their metrics (a live one up to its last batch).
    const std::vector<runtime::StatisticsRun> runs =
        m_statisticsRuns ? m_statisticsRuns() : std::vector<runtime::StatisticsRun>();
    std::shared_ptr<const runtime::GoodputModel> model;
    QString why = tr("time to target needs a run of this model with a measured noise scale (train one, or open a "
                     "trained run's directory: every run records it)");
    if (!runs.empty()) {
        if (auto fitted = runtime::goodputFromRuns(runs, target)) {
            model = std::make_shared<const runtime::GoodputModel>(std::move(fitted).value());
        } else {
            why += QStringLiteral(" (") + toQt(fitted.error().message) + QStringLiteral(")");
        }
    }
    m_goodputWhy = model ? QString() : why;
    const bool same = model && m_goodput ? *model == *m_goodput : model == m_goodput;
    if (same) {
        return false; // the same figures: the prediction shown stands
    }
    m_goodput = std::move(model);
    return true;
}

void TuningPanel::suggestionsFinished()
{
    m_suggestButton->setEnabled(true);
    const auto result = m_search->result();
    m_suggestions->setRowCount(0);
    if (!result) {
        m_suggestStatus->setText(toQt(result.error().describe()));
        Q_EMIT suggestionsReady();
        return;
    }
    // Only rows a run would start with: the same pre-flight as the what-if and Train live.
    std::vector<runtime::TuneCandidate> top;
    int refusedByRuntime = 0;
    QString firstRefusal;
    for (const auto& candidate : result->top) {
        if (Status start = preflight(suggestionConfig(candidate.accum, candidate.microBatchSize)); !start) {
            ++refusedByRuntime;
            if (firstRefusal.isEmpty()) {
                firstRefusal = toQt(start.error().message);
            }
            continue;
        }
        top.push_back(candidate);
    }
    m_suggestions->setRowCount(static_cast<int>(top.size()));
    double bestTime = 0; // without E_min the times are relative: to the best row's
    for (const auto& c : top) {
        if (c.timeToTargetS && (bestTime <= 0 || *c.timeToTargetS < bestTime)) {
            bestTime = *c.timeToTargetS;
        }
    }
    for (int i = 0; i < static_cast<int>(top.size()); ++i) {
        const auto& c = top[static_cast<std::size_t>(i)];
        QString time = QStringLiteral("—");
        if (c.timeToTargetS && m_suggestSeconds) {
            time = formatDuration(*c.timeToTargetS * 1e9) + QStringLiteral(" ± ")
                + formatDuration(c.timeToTargetSpreadS * 1e9);
        } else if (c.timeToTargetS && bestTime > 0) {
            time = tr("%1× ± %2")
                       .arg(*c.timeToTargetS / bestTime, 0, 'f', 2)
                       .arg(c.timeToTargetSpreadS / bestTime, 0, 'f', 2);
        }
        const bool model = c.timeToTargetS.has_value();
        const QStringList cells{QString::number(c.accum), QString::number(c.microBatchSize),
            QString::number(c.throughputSamplesPerSecond, 'f', 0),
            model ? QString::number(c.efficiency, 'f', 2) : QStringLiteral("—"),
            model ? QString::number(c.stalenessFactor, 'f', 2) : QStringLiteral("—"), time,
            formatBytes(static_cast<double>(c.peakMemoryBytes)), QString::number(c.lagBound)};
        for (int col = 0; col < cells.size(); ++col) {
            auto* item = new QTableWidgetItem(cells[col]);
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
            if (col == kColThroughput) {
                item->setData(Qt::UserRole, c.throughputSamplesPerSecond); // the predicted figure, unrounded
                item->setToolTip(tr("Predicted %1 from %2")
                                     .arg(c.steady ? tr("steady state") : tr("longest simulation (no steady state)"),
                                         m_suggestSource));
            }
            if (col == kColTimeToTarget && c.timeToTargetS) {
                item->setData(Qt::UserRole, *c.timeToTargetS); // seconds, or multiples of E_min per (seq/s)
                item->setToolTip(tr("Predicted from %1").arg(m_suggestModel));
            }
            m_suggestions->setItem(i, col, item);
        }
    }
    const QString refused = result->rejectedByBatch > 0
        ? tr(", %1 by the schedule (its rules on m)").arg(result->rejectedByBatch)
        : QString();
    const QString runtimeRefused = refusedByRuntime > 0
        ? tr(", %1 that the runtime would refuse (%2)").arg(refusedByRuntime).arg(firstRefusal)
        : QString();
    const QString objective = m_suggestObjective == runtime::TuneObjective::TimeToTarget
        ? tr("ranked by predicted time to target (%1)").arg(m_suggestModel)
        : m_suggestModel;
    m_suggestStatus->setText(tr("%1 simulated (predicted steady seq/s, times: %4); rejected: %2 by drift, %3 by "
                                "memory%5%6. %7. Double-click to apply.")
                                 .arg(result->evaluated)
                                 .arg(result->rejectedByLag)
                                 .arg(result->rejectedByMemory)
                                 .arg(m_suggestSource, refused, runtimeRefused, objective));
    Q_EMIT suggestionsReady();
    if (std::exchange(m_suggestAgain, false)) {
        suggest(); // recalibrated while searching: the table shows the new times
    }
}

WhatIfConfig TuningPanel::suggestionConfig(int accum, int microBatchSize) const
{
    WhatIfConfig c = config();
    c.run.pipeline.microbatches = accum; // the tuner's a = m
    c.run.pipeline.accum = 0;
    c.run.pipeline.microBatchSize = microBatchSize;
    return c;
}

void TuningPanel::applySuggestion(int row)
{
    if (row < 0 || row >= m_suggestions->rowCount()) {
        return;
    }
    setConfig(suggestionConfig(
        m_suggestions->item(row, kColAccum)->text().toInt(), m_suggestions->item(row, kColMicroBatch)->text().toInt()));
    Q_EMIT configChanged(config());
}

} // namespace bs::ui
