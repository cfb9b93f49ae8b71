#pragma once
// A long simulation's figures from three short ones: the one place the simulator knows that a
// schedule repeats. A schedule's programs repeat batch after batch, and once the pipeline has
// settled one more batch adds the same to every figure of the report and moves the drain (and
// its idle spans) by the same time. So simulate() with figuresOnly drives and analyses K, K + 1
// and K + 2 batches plainly, checks that the rule read off the first two predicts the third
// exactly (every figure, every idle span), and applies the rule read off the last two to N.
// Where the check fails it tries again at twice K, as long as the short runs together cost no
// more than the N batches they replace; a schedule that never settles (or repeats over more than
// one batch) is driven and analysed N batches plainly. The tuner's steady throughput reads the
// period found here (SimulationResult::steadyBatchPeriodNs): one steady state, in one place.
// Nothing below simulate() knows about any of this: the scheduler core drives, the analysis walks.

#include "profiler/analysis/report.h"

#include <optional>

namespace bs::runtime {

/// The batches of the first of the three short runs (K) at the first try.
inline constexpr int kSettleBatches = 4;

/// `longer`'s report (a run of one batch more than `shorter`'s, same settings) extended by
/// `extra` more batches, each adding what the batch between the two added: additive figures
/// (times, counts, the lag histogram) grow by their increment, the idle spans of the repeated
/// batch are repeated, each copy moved by the makespan's increment, and the spans after them
/// (the drain's) move on. Fractions are computed from the figures as analyze() computes them.
/// nullopt where the two reports do not differ by one inserted batch of spans. Without `spans`
/// the extended report's bubbles are left empty (they are still checked): at N = 10 000 they are
/// millions of spans, and only a timeline reads them.
std::optional<profiler::Report> extendReport(
    const profiler::Report& shorter, const profiler::Report& longer, int extra, bool spans = true);

/// Whether two reports are the same, figure for figure and span for span.
bool sameReport(const profiler::Report& a, const profiler::Report& b);

} // namespace bs::runtime
