#include "ui/charts/metrics_panel.h"

#include "ui/common/format.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QStandardItemModel>
#include <QVBoxLayout>

#include <algorithm>

namespace bs::ui {

MetricsPanel::MetricsPanel(QWidget* parent)
    : QWidget(parent)
    , m_axis(new QComboBox(this))
    , m_note(new QLabel(this))
    , m_key(new QLabel(this))
    , m_target(new QDoubleSpinBox(this))
    , m_loss(new LossChartView(this))
    , m_drift(new DriftChartView(this))
    , m_noise(new NoiseScaleChartView(this))
    , m_throughput(new ThroughputChartView(this))
{
    m_axis->setObjectName(QStringLiteral("timeAxis"));
    m_axis->addItem(tr("virtual time"), static_cast<int>(TimeAxis::Virtual));
    m_axis->addItem(tr("wall time"), static_cast<int>(TimeAxis::Wall));
    auto* top = new QHBoxLayout;
    top->setContentsMargins(4, 2, 4, 0);
    top->addWidget(new QLabel(tr("Time axis:"), this));
    top->addWidget(m_axis);
    m_target->setObjectName(QStringLiteral("targetLoss"));
    m_target->setRange(0, 100);
    m_target->setDecimals(2);
    m_target->setSingleStep(0.1);
    m_target->setSpecialValueText(tr("none"));
    m_target->setToolTip(tr("Target validation loss: draws the line and marks when each run's validation loss "
                            "first reached it; the comparison table's time to target (val. loss) follows."));
    top->addWidget(new QLabel(tr("Target loss:"), this));
    top->addWidget(m_target);
    m_note->setWordWrap(true);
    m_note->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // never widens the window
    top->addWidget(m_note, 1);
    m_key->setObjectName(QStringLiteral("runKey"));
    m_key->setTextFormat(Qt::RichText);
    m_key->setWordWrap(true);
    m_key->setContentsMargins(6, 0, 4, 0);
    m_key->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred); // wraps, never widens the window
    auto* charts = new QHBoxLayout;
    charts->setContentsMargins(0, 0, 0, 0);
    for (QWidget* w : {static_cast<QWidget*>(m_loss), static_cast<QWidget*>(m_drift), static_cast<QWidget*>(m_noise),
             static_cast<QWidget*>(m_throughput)}) {
        w->setMinimumHeight(200);
        charts->addWidget(w, 1);
    }
    auto* column = new QVBoxLayout(this);
    column->setContentsMargins(0, 0, 0, 0);
    column->setSpacing(2);
    column->addLayout(top);
    column->addWidget(m_key);
    column->addLayout(charts, 1);
    connect(m_axis, &QComboBox::currentIndexChanged, this,
        [this](int index) { setTimeAxis(static_cast<TimeAxis>(m_axis->itemData(index).toInt())); });
    connect(m_target, &QDoubleSpinBox::valueChanged, this, [this](double target) {
        m_loss->setCurves(m_runs, target);
        Q_EMIT targetLossEdited(target);
    });
    updateSelector({});
}

double MetricsPanel::targetLoss() const
{
    return m_target->value();
}

void MetricsPanel::setRuns(const std::vector<LossCurve>& runs, double targetLoss)
{
    updateSelector(runs);
    m_runs = runs;
    {
        const QSignalBlocker quiet(m_target);
        m_target->setValue(targetLoss);
    }
    m_loss->setCurves(runs, targetLoss);
    m_drift->setCurves(runs);
    m_noise->setCurves(runs);
    m_throughput->setCurves(runs);
    const QStringList names = keyNames(runs);
    QStringList entries;
    for (qsizetype i = 0; i < names.size(); ++i) {
        if (runs[static_cast<std::size_t>(i)].samples.empty()) {
            continue; // not drawn in any view
        }
        entries << QStringLiteral("<span style='color:%1'>&#9644;</span>&nbsp;%2")
                       .arg(TimeSeriesChartView::curveColor(static_cast<int>(i)).name(), names[i].toHtmlEscaped());
    }
    m_key->setText(entries.join(QStringLiteral("&nbsp;&nbsp;&nbsp; ")));
    m_key->setVisible(!entries.isEmpty());
}

QStringList MetricsPanel::keyNames(const std::vector<LossCurve>& runs)
{
    QStringList names;
    for (const LossCurve& run : runs) {
        names << run.label;
    }
    return distinctLabels(names);
}

void MetricsPanel::setTimeAxis(TimeAxis axis)
{
    const int index = m_axis->findData(static_cast<int>(axis));
    if (m_axis->currentIndex() != index) {
        m_axis->setCurrentIndex(index); // re-enters through currentIndexChanged
        return;
    }
    m_loss->setTimeAxis(axis);
    m_drift->setTimeAxis(axis);
    m_noise->setTimeAxis(axis);
    m_throughput->setTimeAxis(axis);
}

bool MetricsPanel::wallTimeAvailable() const
{
    const auto* model = qobject_cast<const QStandardItemModel*>(m_axis->model());
    return model && model->item(1)->isEnabled();
}

void MetricsPanel::updateSelector(const std::vector<LossCurve>& runs)
{
    const bool anyWall =
        std::any_of(runs.begin(), runs.end(), [](const LossCurve& r) { return hasWallTime(r.samples); });
    const bool anyVirtualOnly = std::any_of(
        runs.begin(), runs.end(), [](const LossCurve& r) { return !r.samples.empty() && !hasWallTime(r.samples); });
    if (auto* model = qobject_cast<QStandardItemModel*>(m_axis->model())) {
        model->item(1)->setEnabled(anyWall);
    }
    if (!anyWall && timeAxis() == TimeAxis::Wall) {
        setTimeAxis(TimeAxis::Virtual);
    }
    if (runs.empty() || std::all_of(runs.begin(), runs.end(), [](const LossCurve& r) { return r.samples.empty(); })) {
        m_note->setText(tr("Simulated runs have no training metrics: train live (Run ▸ Train live) or open a run directory."));
    } else if (!anyWall) {
        m_note->setText(tr("Wall time: not recorded by these runs (virtual time only)."));
    } else if (anyVirtualOnly) {
        m_note->setText(tr("Some runs have virtual time only; they are hidden on the wall-time axis."));
    } else {
        m_note->clear();
    }
    m_note->setToolTip(m_note->text()); // the whole note where a narrow panel cuts its second line
}

} // namespace bs::ui
