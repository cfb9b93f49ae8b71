#include "ui/tuning/tuning_panel.h"

#include "runtime/plan/gpu/gpu_probe.h"
#include "runtime/plan/schedule/catalogue.h"
#include "runtime/plan/schedule/limits.h"
#include "ui/common/format.h"
#include "ui/tuning/figures_table.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace bs::ui {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

QSlider* makeSlider(int lo, int hi, QWidget* parent)
{
    auto* s = new QSlider(Qt::Horizontal, parent);
    s->setRange(lo, hi);
    s->setTickPosition(QSlider::TicksBelow);
    s->setTickInterval(8);
    s->setPageStep(4);
    return s;
}

QWidget* sliderRow(QSlider* slider, QLabel* value, QWidget* parent)
{
    auto* row = new QWidget(parent);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(slider, 1);
    value->setMinimumWidth(28);
    value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    h->addWidget(value);
    return row;
}

/// The a slider's usual range; a schedule whose least m is above it widens it.
constexpr int kAccumSliderMax = 64;

/// The schedule's rules on m at p ranks in words, from its catalogue traits; empty when none.
QString microbatchRules(const runtime::ScheduleInfo& info, int p)
{
    QStringList rules;
    if (info.needsMicrobatchesMultipleOfRanks) {
        rules << TuningPanel::tr("a multiple of p = %1").arg(p);
    }
    if (info.minMicrobatchesPerRank > 0) {
        rules << TuningPanel::tr("at least %1·p = %2")
                     .arg(info.minMicrobatchesPerRank)
                     .arg(info.minMicrobatchesPerRank * p);
    }
    if (info.needsMicrobatchesCoveringDepth) {
        rules << TuningPanel::tr("at least p − 1 = %1 (two weight versions)").arg(info.minMicrobatches(p, 0));
    }
    return rules.join(TuningPanel::tr(", "));
}

} // namespace

TuningPanel::TuningPanel(QWidget* parent)
    : QWidget(parent)
    , m_search(new QFutureWatcher<Result<runtime::TuneResult>>(this))
    , m_capacity(runtime::probeMemoryCapacity())
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    layout->addWidget(buildControls());
    layout->addWidget(buildFigures());
    layout->addWidget(buildSuggest(), 1);
    connect(m_search, &QFutureWatcher<Result<runtime::TuneResult>>::finished, this, &TuningPanel::suggestionsFinished);
    setConfig(WhatIfConfig{});
}

TuningPanel::~TuningPanel()
{
    m_search->waitForFinished();
}

QWidget* TuningPanel::buildControls()
{
    auto* box = new QGroupBox(tr("What if"), this);
    auto* form = new QFormLayout(box);
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    m_schedule = new QComboBox(box);
    m_baseline = new QComboBox(box);
    m_baseline->addItem(tr("none"), QString());
    for (const auto& info : runtime::scheduleCatalogue()) {
        m_schedule->addItem(toQt(info.name), toQt(info.name));
        m_schedule->setItemData(m_schedule->count() - 1, toQt(info.summary), Qt::ToolTipRole);
        m_baseline->addItem(toQt(info.name), toQt(info.name));
    }
    m_stages = new QSpinBox(box);
    m_stages->setObjectName(QStringLiteral("stagesSpin"));
    m_stages->setRange(1, runtime::limits::kMaxStages); // the validator's and the generators' limits
    m_stagesPerRank = new QSpinBox(box);
    m_stagesPerRank->setObjectName(QStringLiteral("stagesPerRankSpin"));
    m_stagesPerRank->setToolTip(tr("v: model stages (chunks) each rank holds; interleaved and V schedules only"));
    m_placement = new QLabel(box);
    m_placement->setObjectName(QStringLiteral("placementLabel"));
    m_placement->setStyleSheet(QStringLiteral("color: #6b7280;"));
    auto* chunksRow = new QWidget(box);
    auto* chunks = new QHBoxLayout(chunksRow);
    chunks->setContentsMargins(0, 0, 0, 0);
    chunks->addWidget(m_stagesPerRank, 1);
    chunks->addWidget(m_placement);
    m_model = new QComboBox(box);
    for (const auto& name : gptPresetNames()) {
        m_model->addItem(toQt(name), toQt(name));
    }
    m_device = new QComboBox(box);
    for (const auto& name : runtime::deviceProfileNames()) {
        m_device->addItem(toQt(name), toQt(name));
    }
    m_runDevice = new QComboBox(box);
    // A GPU's label says why it cannot train: the combo shows what fits and the popup the rest, so a
    // long reason never widens the panel past a laptop's screen (tst_window_fit).
    m_runDevice->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_runDevice->setMinimumContentsLength(8);
    // The CUDA driver, looked up at run time: no torch here. A GPU that cannot train here (no CUDA
    // runtime module) or no GPU at all is listed disabled, saying why.
    for (const auto& choice : runtime::gpu::runDeviceChoices()) {
        m_runDevice->addItem(toQt(choice.label), toQt(choice.name));
        if (!choice.unusable.empty()) {
            if (auto* items = qobject_cast<QStandardItemModel*>(m_runDevice->model())) {
                items->item(m_runDevice->count() - 1)->setEnabled(false);
            }
            m_runDevice->setItemData(m_runDevice->count() - 1, toQt(choice.unusable), Qt::ToolTipRole);
        }
    }
    m_runDevice->setToolTip(tr("Where Run trains: the CPU or a GPU found on this machine (cuda: every GPU, stages in "
                               "contiguous blocks). The Device above is the profile the what-if simulates."));
    m_accum = makeSlider(1, kAccumSliderMax, box);
    m_accumValue = new QLabel(box);
    m_accumRule = new QLabel(box);
    m_accumRule->setObjectName(QStringLiteral("accumRuleLabel"));
    m_accumRule->setWordWrap(true);
    m_accumRule->setStyleSheet(QStringLiteral("color: #6b7280;"));
    m_accumRule->hide();
    m_microBatch = makeSlider(1, 64, box);
    m_microBatchValue = new QLabel(box);
    m_globalBatch = new QLabel(box);
    m_globalBatch->setWordWrap(true); // "G = a·b = 2048 sequences" in a narrow (scrolling) dock
    m_batches = new QSpinBox(box);
    m_batches->setRange(1, 64);
    m_budget = new QDoubleSpinBox(box);
    m_budget->setRange(0, 1e6);
    m_budget->setDecimals(0);
    m_budget->setSuffix(tr(" MiB"));
    m_budget->setSpecialValueText(tr("no limit"));
    m_budget->setSingleStep(16);

    form->addRow(tr("Schedule"), m_schedule);
    form->addRow(tr("Compare with"), m_baseline);
    form->addRow(tr("Stages p"), m_stages);
    form->addRow(tr("Stages / rank v"), chunksRow);
    form->addRow(tr("Model"), m_model);
    form->addRow(tr("Device"), m_device);
    form->addRow(tr("Run on"), m_runDevice);
    form->addRow(tr("Accumulation a"), sliderRow(m_accum, m_accumValue, box));
    form->addRow(QString(), m_accumRule);
    form->addRow(tr("Micro-batch b"), sliderRow(m_microBatch, m_microBatchValue, box));
    form->addRow(tr("Global batch"), m_globalBatch);
    form->addRow(tr("Batches simulated"), m_batches);
    form->addRow(tr("Memory budget"), m_budget);
    m_recompute = new QCheckBox(tr("Recompute"), box);
    m_recompute->setObjectName(QStringLiteral("recomputeCheck"));
    m_recompute->setToolTip(tr("model.recompute: every backward runs its stage's forward again (more time), and an "
                               "in-flight micro-batch keeps only the stage's input (less memory)"));
    form->addRow(QString(), m_recompute);
    m_accum->setToolTip(tr("PACI's accumulation window a: micro-batches per update (also m for flush schedules)"));
    m_budget->setToolTip(tr("Per-stage memory budget: drawn on the memory chart, enforced by Suggest"));

    const auto changed = [this] { emitChanged(); };
    const auto constrain = [this] { constrainAccum(); }; // before `changed`: what is emitted is valid
    connect(m_schedule, &QComboBox::currentIndexChanged, this, [this] { updateStagesPerRank(); }); // before `changed`
    connect(m_schedule, &QComboBox::currentIndexChanged, this, constrain);
    connect(m_stages, &QSpinBox::valueChanged, this, constrain);
    connect(m_accum, &QSlider::valueChanged, this, constrain);
    connect(m_schedule, &QComboBox::currentIndexChanged, this, changed);
    connect(m_stagesPerRank, &QSpinBox::valueChanged, this, changed);
    connect(m_baseline, &QComboBox::currentIndexChanged, this, changed);
    connect(m_model, &QComboBox::currentIndexChanged, this, changed);
    connect(m_device, &QComboBox::currentIndexChanged, this, changed);
    connect(m_runDevice, &QComboBox::currentIndexChanged, this, changed);
    connect(m_stages, &QSpinBox::valueChanged, this, changed);
    connect(m_batches, &QSpinBox::valueChanged, this, changed);
    connect(m_budget, &QDoubleSpinBox::valueChanged, this, changed);
    connect(m_recompute, &QCheckBox::toggled, this, changed);
    connect(m_accum, &QSlider::valueChanged, this, changed);
    connect(m_microBatch, &QSlider::valueChanged, this, changed);
    buildRefusalRows(form);
    return box;
}

QWidget* TuningPanel::buildFigures()
{
    auto* box = new QGroupBox(tr("Predicted"), this);
    m_figuresBox = box;
    auto* v = new QVBoxLayout(box);
    m_figures = new QLabel(tr("—"), box);
    m_figures->setTextFormat(Qt::RichText);
    m_figures->setWordWrap(true);
    v->addWidget(m_figures);
    m_source = new QLabel(box);
    m_source->setObjectName(QStringLiteral("calibrationSource"));
    m_source->setWordWrap(true);
    m_source->setStyleSheet(QStringLiteral("color: #6b7280;"));
    v->addWidget(m_source);
    m_fitWarning = makeFitWarning(box);
    v->addWidget(m_fitWarning);
    setCalibration(nullptr);
    return box;
}

WhatIfConfig TuningPanel::config() const
{
    // The settings last given (an opened run's whole RunConfig: steps, optimizer, data, a != m)
    // with what the controls show now on top.
    WhatIfConfig c = m_base;
    runtime::RunConfig& run = c.run;
    run.schedule.name = fromQt(m_schedule->currentData().toString());
    c.baseline = fromQt(m_baseline->currentData().toString());
    run.pipeline.stages = m_stages->value();
    if (const runtime::ScheduleInfo* placed = runtime::findSchedule(run.schedule.name);
        placed && placed->multiStage()) {
        // The schedule's own v stays "0 = its own" (an opened run's config writes back as it was).
        const int v = m_stagesPerRank->value();
        run.pipeline.stagesPerRank =
            v == placed->stagesPerRank(m_base.run.pipeline.stagesPerRank) ? m_base.run.pipeline.stagesPerRank : v;
    } else {
        run.pipeline.stagesPerRank = 0; // one stage per rank
    }
    const std::string preset = fromQt(m_model->currentData().toString());
    if (preset != run.model.preset) {
        if (auto shape = gptPreset(preset)) {
            run.model.preset = preset;
            run.model.shape = *shape;
        }
    }
    c.deviceProfile = fromQt(m_device->currentData().toString());
    run.device.name = fromQt(m_runDevice->currentData().toString());
    // The slider is the window a; moving it makes m whole windows of a (for a schedule without a
    // window, a is its m). The catalogue's resolver says what (p, m, a, v) mean.
    const bool moved = m_accum->value() != c.accum();
    if (auto pipeline = runtime::resolvePipeline(run.schedule.name, run.pipeline.stages,
            moved ? 0 : run.pipeline.microbatches, moved ? m_accum->value() : run.pipeline.accum,
            run.pipeline.stagesPerRank, run.pipeline.extraDepth, runtime::MicrobatchChoice::WholeWindows)) {
        run.pipeline.microbatches = pipeline->microbatches;
        run.pipeline.accum = pipeline->window == pipeline->microbatches ? 0 : pipeline->accum();
    }
    run.pipeline.microBatchSize = m_microBatch->value();
    c.batches = m_batches->value();
    c.memoryBudgetBytes = static_cast<std::int64_t>(m_budget->value() * kMiB);
    c.calibration = m_calibration;
    c.goodput = m_goodput;
    run.model.recompute = m_recompute->isChecked();
    if (run.pipeline.stages != m_base.run.pipeline.stages || run.model.preset != m_base.run.model.preset) {
        // An explicit split (Balance stages) or measured units belong to the stages and model they
        // were made for: another p or model starts from the FLOPs split again.
        if (run.pipeline.partition == "explicit") {
            run.pipeline.partition = "flops";
            run.pipeline.partitionUnits.clear();
        }
        if (run.model.preset != m_base.run.model.preset) {
            c.unitCosts.clear();
            c.unitCostsMicroBatch = 0;
        }
    }
    return c;
}

void TuningPanel::setCalibration(const CalibrationPtr& calibration)
{
    m_calibration = calibration;
    m_source->setText(tr("Times: %1").arg(sourceText()));
    m_source->setToolTip(tr("The sliders, Suggest and the prediction check all predict from these times"));
    updateFitWarnings();
    if (m_suggested) { // the table follows every recalibration, never left with the old times
        if (m_search->isRunning()) {
            m_suggestAgain = true;
        } else {
            suggest();
        }
    }
}

QString TuningPanel::figuresTitle() const
{
    return m_figuresBox->title();
}

QString TuningPanel::sourceText() const
{
    if (m_calibration) {
        return toQt(m_calibration->sourceFor(fromQt(m_schedule->currentData().toString())));
    }
    return tr("device profile %1").arg(m_device->currentData().toString());
}

void TuningPanel::clearFigures(const QString& why)
{
    m_figuresBox->setTitle(tr("Predicted"));
    m_figures->setText(QStringLiteral("<span style='color:#6b7280'>") + why.toHtmlEscaped() + QStringLiteral("</span>"));
}

void TuningPanel::setConfig(const WhatIfConfig& c)
{
    m_silent = true;
    m_base = c;
    const auto select = [](QComboBox* box, const std::string& value) {
        const int i = box->findData(toQt(value));
        if (i >= 0) {
            box->setCurrentIndex(i);
        }
    };
    select(m_schedule, c.run.schedule.name);
    select(m_baseline, c.baseline);
    // A run's model or device that the lists lack (an explicit shape, a GPU this machine does not
    // have) is shown as it is, so config() and File ▸ Export keep it rather than the list's first.
    const auto selectOrAdd = [&select](QComboBox* box, const std::string& value, const QString& text) {
        if (box->findData(toQt(value)) < 0) {
            box->addItem(text, toQt(value));
        }
        select(box, value);
    };
    selectOrAdd(
        m_model, c.run.model.preset, c.run.model.preset.empty() ? tr("explicit shape") : toQt(c.run.model.preset));
    select(m_device, c.deviceProfile);
    selectOrAdd(m_runDevice, c.run.device.name, tr("%1 (not on this machine)").arg(toQt(c.run.device.name)));
    m_stages->setValue(c.run.pipeline.stages);
    updateStagesPerRank();
    if (const runtime::ScheduleInfo* info = runtime::findSchedule(c.run.schedule.name)) {
        m_stagesPerRank->setValue(info->stagesPerRank(c.run.pipeline.stagesPerRank));
    }
    m_lastAccum = c.accum();
    m_accum->setValue(c.accum());
    constrainAccum(); // a run's own a stands where its schedule takes it
    m_microBatch->setValue(c.microBatchSize());
    m_batches->setValue(c.batches);
    m_budget->setValue(static_cast<double>(c.memoryBudgetBytes) / kMiB);
    m_recompute->setChecked(c.run.model.recompute);
    m_silent = false;
    updateBatchLabel();
    updateRefusal();
    updateFitWarnings();
}

void TuningPanel::updateStagesPerRank()
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(fromQt(m_schedule->currentData().toString()));
    const int least = info ? info->defaultStagesPerRank : 1;
    const int most = info ? info->maxStagesPerRank : 1;
    const QSignalBlocker quiet(m_stagesPerRank); // the schedule change itself is what is emitted
    const int before = m_stagesPerRank->value();
    m_stagesPerRank->setRange(least, most);
    m_stagesPerRank->setValue(before >= least && before <= most ? before : least);
    m_stagesPerRank->setEnabled(least < most);
    QString where = tr("one per rank");
    QString why = tr("Stage i on rank i");
    if (info && info->placement == runtime::Placement::Loop) {
        where = tr("loop");
        why = tr("Loop placement: stage i on rank i mod p (Megatron's virtual stages)");
    } else if (info && info->placement == runtime::Placement::V) {
        where = tr("V");
        why = tr("V placement: rank r holds stages r and 2p − 1 − r");
    }
    m_placement->setText(where);
    m_placement->setToolTip(why);
}

void TuningPanel::constrainAccum()
{
    const runtime::ScheduleInfo* info = runtime::findSchedule(fromQt(m_schedule->currentData().toString()));
    const int p = m_stages->value();
    const bool window = !info || info->takesAccumWindow();
    const auto accepted = [&](int a) { return window || info->acceptsMicrobatches(p, a, 0); };
    const int least = window ? 1 : fewestAcceptedFrom(*info, p, 1);
    const QSignalBlocker quiet(m_accum); // the move that called this is what is emitted
    m_accum->setRange(least, std::max(kAccumSliderMax, least));
    if (const int a = m_accum->value(); !accepted(a)) { // an a = m schedule: snap the way the slider moved
        int down = a - 1;
        while (!accepted(down)) { // stops at `least` at the latest
            --down;
        }
        const int up = fewestAcceptedFrom(*info, p, a);
        m_accum->setValue(a >= m_lastAccum && up <= m_accum->maximum() ? up : down);
    }
    m_lastAccum = m_accum->value();
    const QString rules = info ? microbatchRules(*info, p) : QString();
    m_accumRule->setVisible(!rules.isEmpty());
    if (rules.isEmpty()) {
        return;
    }
    const QString name = toQt(info->displayName);
    m_accumRule->setText(window ? tr("%1 needs m %2, and a dividing m: simulates m = %3 per batch")
                                      .arg(name, rules)
                                      .arg(info->microbatchesForWindow(p, m_lastAccum, 0))
                                : tr("a = m here; %1 needs m %2").arg(name, rules));
}

void TuningPanel::updateBatchLabel()
{
    m_accumValue->setText(QString::number(m_accum->value()));
    m_microBatchValue->setText(QString::number(m_microBatch->value()));
    m_globalBatch->setText(tr("G = a·b = %1 sequences").arg(m_accum->value() * m_microBatch->value()));
}

void TuningPanel::emitChanged()
{
    updateBatchLabel();
    m_source->setText(tr("Times: %1").arg(sourceText()));
    updateRefusal();
    updateFitWarnings();
    if (!m_silent) {
        Q_EMIT configChanged(config());
    }
}

void TuningPanel::showPrediction(const Prediction& prediction, double latencyMs)
{
    showFigures(prediction, tr("Predicted: %1").arg(toQt(prediction.primary.label)),
        prediction.computeMs > 0 ? tr("<span style='color:#6b7280'>simulated in %1 ms (%2 ms from input)</span>")
                                       .arg(QString::number(prediction.computeMs, 'f', 1),
                                           QString::number(latencyMs, 'f', 1))
                                 : QString());
}

void TuningPanel::showRunFigures(const Prediction& figures, bool measured)
{
    // A simulated replay is a prediction of a run, not a measurement: it never says "measured".
    const QString label = toQt(figures.primary.label);
    if (measured) {
        showFigures(figures, tr("Measured: %1").arg(label),
            tr("<span style='color:#6b7280'>measured by the finished run</span>"), true);
    } else {
        showFigures(figures, tr("Simulated: %1").arg(label),
            tr("<span style='color:#6b7280'>predicted by the simulated replay (nothing was measured)</span>"));
    }
}

void TuningPanel::showFigures(const Prediction& prediction, const QString& title, const QString& note, bool measured)
{
    m_figuresBox->setTitle(title);
    m_figures->setText(figuresTable(prediction, measured) + note);
    // Where the headline time to target comes from (its inputs are long for the narrow panel).
    m_figures->setToolTip(!measured && prediction.config.goodput
            ? tr("Time to target predicted from %1").arg(toQt(prediction.config.goodput->describe()))
            : QString());
}

void TuningPanel::showError(const QString& message)
{
    m_figures->setText(
        QStringLiteral("<span style='color:#b91c1c'>") + message.toHtmlEscaped() + QStringLiteral("</span>"));
}

} // namespace bs::ui
