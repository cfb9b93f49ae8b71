#include "ui/tuning/balance_dialog.h"

#include "runtime/plan/partition/partition_choice.h"
#include "ui/common/format.h"

#include <QApplication>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <numeric>

namespace bs::ui {

namespace {

enum Column
{
    kUnits,
    kHolds,
    kMs,
    kOfMean,
    kMemory,
    kColumns
};

constexpr double kMiB = 1024.0 * 1024.0;

/// "embedding – block 2", "head": the units a stage holds, first to last.
QString holdsText(const GptShape& shape, int first, int count)
{
    const QString a = toQt(layerUnitName(shape, first));
    return count <= 1 ? a : a + QStringLiteral(" – ") + toQt(layerUnitName(shape, first + count - 1));
}

} // namespace

BalanceStagesDialog::BalanceStagesDialog(const WhatIfConfig& config, UnitMeasurer measure, QWidget* parent)
    : QDialog(parent)
    , m_config(config)
    , m_measure(std::move(measure))
{
    setWindowTitle(tr("Balance stages"));
    setObjectName(QStringLiteral("balanceStagesDialog"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Layer units per stage (embedding, each block, final norm, head). Changing a stage "
                                "moves its boundary with the next stage; the figures are the what-if's prediction "
                                "of the edited split."),
        this);
    intro->setWordWrap(true);
    layout->addWidget(intro);
    m_table = new QTableWidget(0, kColumns, this);
    m_table->setHorizontalHeaderLabels({tr("units"), tr("holds"), tr("F+B ms/mb"), tr("of mean"), tr("peak memory")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(kHolds, QHeaderView::Stretch);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    layout->addWidget(m_table, 1);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("balanceSummary"));
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);
    m_costs = new QLabel(this);
    m_costs->setStyleSheet(QStringLiteral("color: #6b7280;"));
    m_costs->setWordWrap(true);
    layout->addWidget(m_costs);

    auto* row = new QHBoxLayout();
    m_balance = new QPushButton(tr("Balance"), this);
    m_balance->setObjectName(QStringLiteral("balanceButton"));
    m_balance->setToolTip(tr("The split that minimises the slowest stage within the memory budget (the measured "
                             "unit costs when there are some, FLOP estimates otherwise)"));
    auto* flops = new QPushButton(tr("FLOPs split"), this);
    flops->setToolTip(tr("Whole blocks balanced by FLOPs, the head's cost on the last stage"));
    row->addWidget(m_balance);
    row->addWidget(flops);
    if (m_measure) {
        m_measureButton = new QPushButton(tr("Measure units"), this);
        m_measureButton->setToolTip(tr("Time and size every layer unit on the run's device (a few seconds), then "
                                       "balance and predict with what was measured"));
        row->addWidget(m_measureButton);
        connect(m_measureButton, &QPushButton::clicked, this, &BalanceStagesDialog::measure);
    }
    row->addStretch(1);
    layout->addLayout(row);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Apply | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Apply)->setObjectName(QStringLiteral("applyBalance"));
    buttons->button(QDialogButtonBox::Apply)->setToolTip(tr("Set this split as the what-if's partition"));
    layout->addWidget(buttons);
    connect(buttons->button(QDialogButtonBox::Apply), &QPushButton::clicked, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_balance, &QPushButton::clicked, this, &BalanceStagesDialog::balance);
    connect(flops, &QPushButton::clicked, this, &BalanceStagesDialog::resetToFlops);

    // Start from the split the what-if predicts now (its partition, else the FLOPs split).
    auto current = whatIfPartition(m_config);
    if (current && !current->empty()) {
        setUnitsPerStage(*current);
    } else {
        resetToFlops();
    }
    resize(640, 420);
}

WhatIfConfig BalanceStagesDialog::withPartition(const std::string& mode) const
{
    WhatIfConfig c = m_config;
    c.run.pipeline.partition = mode;
    c.run.pipeline.partitionUnits = mode == "explicit" ? m_units : std::vector<int>{};
    c.run.pipeline.layersPerStage.clear();
    return c;
}

WhatIfConfig BalanceStagesDialog::config() const
{
    return withPartition("explicit");
}

QSpinBox* BalanceStagesDialog::unitsSpin(int stage) const
{
    return stage >= 0 && stage < m_table->rowCount() ? qobject_cast<QSpinBox*>(m_table->cellWidget(stage, kUnits))
                                                     : nullptr;
}

void BalanceStagesDialog::setUnitsPerStage(const std::vector<int>& units)
{
    m_units = units;
    rebuildRows();
    predict();
}

void BalanceStagesDialog::rebuildRows()
{
    m_filling = true;
    const int stages = static_cast<int>(m_units.size());
    const int total = layerUnitCount(m_config.run.model.shape);
    m_table->setRowCount(stages);
    QStringList labels;
    for (int s = 0; s < stages; ++s) {
        labels << tr("stage %1").arg(s);
        auto* spin = unitsSpin(s);
        if (!spin) {
            spin = new QSpinBox(m_table);
            spin->setObjectName(QStringLiteral("unitsSpin%1").arg(s));
            m_table->setCellWidget(s, kUnits, spin);
            connect(spin, &QSpinBox::valueChanged, this, [this, s](int v) { onUnitsEdited(s, v); });
        }
        spin->setRange(1, std::max(1, total - (stages - 1)));
        spin->setValue(m_units[static_cast<std::size_t>(s)]);
        for (int col = kHolds; col < kColumns; ++col) {
            if (!m_table->item(s, col)) {
                auto* item = new QTableWidgetItem();
                item->setTextAlignment(
                    col == kHolds ? (Qt::AlignLeft | Qt::AlignVCenter) : (Qt::AlignRight | Qt::AlignVCenter));
                m_table->setItem(s, col, item);
            }
        }
    }
    m_table->setVerticalHeaderLabels(labels);
    int first = 0;
    for (int s = 0; s < stages; ++s) {
        m_table->item(s, kHolds)->setText(
            holdsText(m_config.run.model.shape, first, m_units[static_cast<std::size_t>(s)]));
        first += m_units[static_cast<std::size_t>(s)];
    }
    m_filling = false;
}

void BalanceStagesDialog::onUnitsEdited(int stage, int value)
{
    if (m_filling || stage < 0 || stage >= static_cast<int>(m_units.size())) {
        return;
    }
    // The counts keep summing to the model's units: a stage that grows takes a unit from the
    // nearest stage that has more than one (after it first; the stages between shift by one), a
    // stage that shrinks gives it to the next stage (the last stage to the one before).
    const auto s = static_cast<std::size_t>(stage);
    const std::size_t n = m_units.size();
    while (n > 1 && value > m_units[s]) {
        std::size_t donor = n;
        for (std::size_t d = 1; d < n && donor == n; ++d) {
            if (s + d < n && m_units[s + d] > 1) {
                donor = s + d;
            } else if (d <= s && m_units[s - d] > 1) {
                donor = s - d;
            }
        }
        if (donor == n) {
            break; // every other stage holds one unit
        }
        --m_units[donor];
        ++m_units[s];
    }
    while (n > 1 && value < m_units[s] && m_units[s] > 1) {
        --m_units[s];
        ++m_units[s + 1 < n ? s + 1 : s - 1];
    }
    rebuildRows();
    predict();
}

void BalanceStagesDialog::predict()
{
    m_stageMs.clear();
    m_stageBytes.clear();
    const WhatIfConfig c = config();
    auto scenario = scenarioFor(c, c.schedule());
    auto request = scenario ? runtime::makeGptRequest(*scenario) : Result<runtime::SimulationRequest>(scenario.error());
    if (request && c.calibration) { // as predictRun() does: the figures are the what-if's
        request->costs = runtime::withFittedTimes(
            std::move(request->costs), c.calibration->fitFor(c.schedule()), c.microBatchSize());
    }
    auto sim = request ? runtime::simulate(*request) : Result<runtime::SimulationResult>(request.error());
    if (!sim) {
        m_summary->setText(
            QStringLiteral("<span style='color:#b91c1c'>%1</span>").arg(toQt(sim.error().describe()).toHtmlEscaped()));
        return;
    }
    const std::size_t stages = std::min(request->costs.stages.size(), sim->report.perStage.size());
    for (std::size_t s = 0; s < stages; ++s) {
        const runtime::StageCost& cost = request->costs.stages[s];
        m_stageMs.push_back(toMillis(cost.forward + cost.duration(runtime::ActionKind::Backward)));
        m_stageBytes.push_back(sim->report.perStage[s].peakMemoryBytes);
    }
    const double slowest = m_stageMs.empty() ? 0.0 : *std::max_element(m_stageMs.begin(), m_stageMs.end());
    const double mean =
        m_stageMs.empty() ? 0.0 : std::accumulate(m_stageMs.begin(), m_stageMs.end(), 0.0) / m_stageMs.size();
    const std::int64_t budget = c.memoryBudgetBytes;
    for (std::size_t s = 0; s < stages && s < static_cast<std::size_t>(m_table->rowCount()); ++s) {
        const int row = static_cast<int>(s);
        m_table->item(row, kMs)->setText(QString::number(m_stageMs[s], 'f', 3));
        m_table->item(row, kOfMean)->setText(formatPercent(mean > 0 ? m_stageMs[s] / mean : 1.0));
        m_table->item(row, kMs)->setForeground(
            m_stageMs[s] == slowest && stages > 1 ? QColor(0xb9, 0x1c, 0x1c) : palette().text().color());
        m_table->item(row, kMemory)->setText(formatBytes(static_cast<double>(m_stageBytes[s])));
        m_table->item(row, kMemory)
            ->setForeground(
                budget > 0 && m_stageBytes[s] > budget ? QColor(0xb9, 0x1c, 0x1c) : palette().text().color());
    }
    m_summary->setText(
        tr("slowest / mean stage: <b>%1</b> · predicted <b>%2 seq/s</b>, bubble %3 (%4)")
            .arg(QString::number(mean > 0 ? slowest / mean : 1.0, 'f', 3),
                QString::number(sim->throughputSamplesPerSecond, 'f', 1), formatPercent(sim->report.bubbleFraction),
                toQt(runLabel(c.schedule(), c.accum(), c.microBatchSize()))));
    m_costs->setText(c.calibration ? tr("Times: %1 (per-stage times measured on the calibrated runs' split)")
                                         .arg(toQt(c.calibration->sourceFor(c.schedule())))
            : !m_config.unitCosts.empty()
            ? tr("Times: layer units measured at b = %1, summed per stage").arg(m_config.unitCostsMicroBatch)
            : tr("Times: device profile %1 (FLOPs)").arg(toQt(c.deviceProfile)));
}

void BalanceStagesDialog::balance()
{
    WhatIfConfig c = withPartition("measured");
    if (c.run.pipeline.memoryBudgetMiB <= 0 && c.memoryBudgetBytes > 0) {
        c.run.pipeline.memoryBudgetMiB = static_cast<double>(c.memoryBudgetBytes) / kMiB; // the panel's budget
    }
    auto units = whatIfPartition(c);
    if (!units) {
        m_summary->setText(QStringLiteral("<span style='color:#b91c1c'>%1</span>")
                               .arg(toQt(units.error().describe()).toHtmlEscaped()));
        return;
    }
    setUnitsPerStage(*units);
}

void BalanceStagesDialog::resetToFlops()
{
    const auto& p = m_config.run.pipeline;
    auto split = partitionLayers(m_config.run.model.shape, p.stages, p.microBatchSize);
    if (!split || std::any_of(split->unitCount.begin(), split->unitCount.end(), [](int u) { return u < 1; })) {
        // More stages than blocks leaves some empty: a stage needs a unit, so the partitioner splits.
        balance();
        return;
    }
    setUnitsPerStage(split->unitCount);
}

void BalanceStagesDialog::measure()
{
    if (!m_measure) {
        return;
    }
    QApplication::setOverrideCursor(Qt::WaitCursor);
    m_costs->setText(tr("measuring every layer unit on %1…").arg(toQt(m_config.run.device.name)));
    QApplication::processEvents();
    auto units = m_measure(toRunConfig(m_config));
    QApplication::restoreOverrideCursor();
    if (!units) {
        m_costs->setText(QStringLiteral("<span style='color:#b91c1c'>%1</span>")
                             .arg(toQt(units.error().describe()).toHtmlEscaped()));
        return;
    }
    m_config.unitCosts = std::move(units).value();
    m_config.unitCostsMicroBatch = m_config.microBatchSize();
    balance();
}

} // namespace bs::ui
