// Timeline benchmarks (not part of ctest): index build, draw-list build and a full offscreen paint
// of 10^6 events at full zoom-out and at a mid zoom (target <= 16 ms a frame), and the
// slider-to-prediction latency of the what-if engine and slider-to-repaint in the window (target <= 50 ms).
//   QT_QPA_PLATFORM=offscreen ./build/tests/ui/timeline_bench --benchmark_min_time=1

#include "ui/compare/compare_view.h"
#include "ui/shell/main_window.h"
#include "ui/timeline/draw_list.h"
#include "ui/timeline/timeline_view.h"
#include "ui/tuning/tuning_panel.h"
#include "ui/tuning/what_if.h"

#include <QApplication>
#include <QEventLoop>
#include <QImage>
#include <QPainter>
#include <QSlider>

#include <benchmark/benchmark.h>

#include "../ui/trace_fixtures.h"

namespace {

using namespace bs::ui;

constexpr std::size_t kEvents = 1'000'000;
constexpr int kStages = 8;
constexpr int kWidth = 1600;
constexpr int kHeight = 600;

const std::shared_ptr<const bs::profiler::TraceSnapshot>& trace()
{
    static const auto snapshot = test::syntheticTrace(kEvents, kStages);
    return snapshot;
}

const std::shared_ptr<const TimelineIndex>& index()
{
    static const auto built = test::analysedIndex(trace());
    return built;
}

/// zoom = 1: everything visible; zoom = 64: 1/64 of the trace around its middle.
TimelineCoordinates window(double zoom, double widthPx)
{
    TimelineCoordinates c(index()->startTime(), index()->endTime(), widthPx);
    c.zoomAround(widthPx / 2, zoom);
    return c;
}

void BM_BuildIndex(benchmark::State& state)
{
    for (auto _ : state) {
        auto built = test::analysedIndex(trace());
        benchmark::DoNotOptimize(built.get());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kEvents));
}
BENCHMARK(BM_BuildIndex)->Unit(benchmark::kMillisecond);

void BM_BuildDrawList(benchmark::State& state)
{
    const TimelineCoordinates c = window(static_cast<double>(state.range(0)), kWidth - TimelineView::kGutterPx);
    std::size_t rects = 0;
    for (auto _ : state) {
        DrawList list = buildDrawList(*index(), c);
        rects = list.blocks.size() + list.bubbles.size();
        benchmark::DoNotOptimize(list.blocks.data());
    }
    state.counters["rects"] = static_cast<double>(rects);
}
BENCHMARK(BM_BuildDrawList)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond);

/// One frame: draw list + QPainter replay into a QImage (what paintEvent does), offscreen.
void BM_PaintFrame(benchmark::State& state)
{
    TimelineView view;
    view.resize(kWidth, kHeight);
    view.setIndex(index());
    const TimelineCoordinates c = window(static_cast<double>(state.range(0)), view.eventAreaWidth());
    view.zoom()->setView(c.viewStart(), c.viewEnd());
    QImage image(kWidth, kHeight, QImage::Format_ARGB32_Premultiplied);
    for (auto _ : state) {
        QPainter painter(&image);
        view.paintTo(painter);
    }
    state.counters["rects"] =
        static_cast<double>(view.lastDrawList().blocks.size() + view.lastDrawList().bubbles.size());
    state.counters["folded"] = static_cast<double>(view.lastDrawList().foldedEvents);
}
BENCHMARK(BM_PaintFrame)->Arg(1)->Arg(64)->Unit(benchmark::kMillisecond);

/// A slider move's worth of work: simulate the chosen schedule and the baseline, index both.
void BM_SliderToPrediction(benchmark::State& state)
{
    WhatIfConfig config; // 8 stages, tiny GPT, PACI a=8 vs 1F1B, 4 batches
    int a = 1;
    for (auto _ : state) {
        config.run.pipeline.microbatches = 1 + (a++ % 16); // a different setting every time, as a dragged slider gives
        auto prediction = predict(config);
        if (!prediction) {
            state.SkipWithError(prediction.error().describe().c_str());
            break;
        }
        benchmark::DoNotOptimize(prediction->get());
    }
}
BENCHMARK(BM_SliderToPrediction)->Unit(benchmark::kMillisecond);

/// End to end in the real window: slider value change -> simulate on a worker -> models, charts
/// and both timelines updated -> synchronous repaint of the timelines.
void BM_SliderToRepaint(benchmark::State& state)
{
    MainWindow window(false);
    window.resize(1680, 1050);
    window.show();
    QSlider* slider = window.tuning()->accumSlider();
    int a = 1;
    for (auto _ : state) {
        QEventLoop loop;
        const auto c = QObject::connect(window.engine(), &PredictionEngine::predicted, &loop, &QEventLoop::quit);
        slider->setValue(1 + (a++ % 16));
        loop.exec();
        QObject::disconnect(c);
        window.compare()->repaint();
    }
    state.counters["engine_latency_ms"] = window.engine()->lastLatencyMs();
}
BENCHMARK(BM_SliderToRepaint)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

int main(int argc, char** argv)
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
