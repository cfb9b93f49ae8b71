// What measuring the gradient noise scale costs per update (issue 30: at most 1 % of step time),
// timed directly instead of as the difference of two whole training runs, whose run-to-run
// spread (± 2.5 % on a 2-core machine, tests/bench/noise_scale_cost.sh) hides a cost of 1 %.
// Not part of ctest; figures go to docs/BENCHMARKS.md.
//
//   noise_probe_bench [--model tiny] [--micro-batch-size 4] [--reps 20] [--threads 1]
//
// The whole model as one stage on the CPU (the probe's work and the compute both grow with a
// stage's parameters, so a balanced split's stages have about the whole model's ratio). Each
// repetition runs, in the runtime's order, one update window of two micro-batches and
// kUpdatesPerPair single-micro-batch updates, and times separately (medians over the repetitions):
//   micro-batch  forward + backward of one micro-batch (b sequences)
//   update       what every update does without the probe: the gradients' squared norm (the
//                finite check), the host read, AdamW's step
//   probe (window)  NoiseProbe's calls for a window of >= 2 micro-batches (PACI a >= 2, flush):
//                |g_1|² after the window's first backward, its read, the averager; a window
//                measures once NoiseProbe::kBackwardsPerSmallGradient micro-batches have passed
//                (every window from 4 on, every other window of two)
//   probe (pair)    a = 1 (async-1f1b, pipedream): one pair in NoiseProbe::kUpdatesPerPair
//                updates measured (the first update's gradients copied, added to the second's,
//                their norm), per update over those updates
// and prints the probe's cost per update, probe / (k · micro-batch + update), for a window of
// k = 1, 2, 4, 8 micro-batches and for 1F1B-flush at m = 8.
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/train/model/gpt_modules_p.h"
#include "runtime/train/model/noise_probe_p.h"

#include <torch/optim/adamw.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options
{
    std::string model = "tiny";
    int microBatchSize = 4;
    int reps = 20;
    int threads = 1;
};

[[noreturn]] void usage(const std::string& why)
{
    std::fprintf(stderr, "noise_probe_bench: %s\n", why.c_str());
    std::exit(2);
}

Options parse(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            usage(a + " needs a value (options: --model, --micro-batch-size, --reps, --threads)");
        }
        const std::string v = argv[++i];
        auto number = [&](int lo) {
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || n < lo || n > 100000) {
                usage(a + " must be an integer >= " + std::to_string(lo) + ", got '" + v + "'");
            }
            return static_cast<int>(n);
        };
        if (a == "--model")
            o.model = v;
        else if (a == "--micro-batch-size")
            o.microBatchSize = number(1);
        else if (a == "--reps")
            o.reps = number(3);
        else if (a == "--threads")
            o.threads = number(1);
        else
            usage("unknown option '" + a + "'");
    }
    return o;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double since(Clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

} // namespace

int main(int argc, char** argv)
{
    namespace d = bs::runtime::detail;
    const Options o = parse(argc, argv);
    auto shape = bs::gptPreset(o.model);
    if (!shape) {
        usage("--model: " + shape.error().describe());
    }
    torch::set_num_threads(o.threads);
    d::GptStage model(*shape, 0, shape->layers, true, true, 1);
    model->train();
    std::vector<torch::Tensor> params = model->parameters();
    for (torch::Tensor& p : params) {
        p.mutable_grad() = torch::zeros_like(p); // as the runtime: allocated once, accumulated in place
    }
    torch::optim::AdamW adamw(params, torch::optim::AdamWOptions(3e-4));
    torch::manual_seed(1);
    const auto b = static_cast<std::int64_t>(o.microBatchSize);
    const torch::Tensor tokens = torch::randint(shape->vocab, {2, b, shape->seqLen + 1}, torch::kLong);

    auto microBatch = [&](int i, double scale) {
        const auto t0 = Clock::now();
        const torch::Tensor x = tokens[i].narrow(1, 0, shape->seqLen);
        const torch::Tensor y = tokens[i].narrow(1, 1, shape->seqLen);
        (d::GptStageImpl::loss(model->forward(x), y) * scale).backward();
        return since(t0);
    };
    // One update as the runtime does it (pipeline_model_steps.cpp): the stage's reads, then AdamW.
    // Returns the update's time without the probe; adds the probe's calls' time to `probeMs`.
    auto update = [&](d::NoiseProbe* probe, double scale, int microbatches, double& probeMs) {
        torch::NoGradGuard noGrad;
        auto t0 = Clock::now();
        std::vector<torch::Tensor> reads{d::gradSquaredNorm(params)};
        double ms = since(t0);
        if (probe) {
            t0 = Clock::now();
            probe->appendReads(params, reads);
            probeMs += since(t0);
        }
        t0 = Clock::now();
        const torch::Tensor host = torch::stack(reads).to(torch::kCPU).contiguous();
        const double* values = host.data_ptr<double>();
        ms += since(t0);
        if (probe) {
            t0 = Clock::now();
            probe->record(params, values, scale, microbatches, o.microBatchSize);
            probeMs += since(t0);
        }
        t0 = Clock::now();
        adamw.step();
        for (torch::Tensor& p : params) {
            p.mutable_grad().zero_();
        }
        return ms + since(t0);
    };

    std::vector<double> microBatchMs, updateMs, windowProbeMs, pairProbeMs;
    std::vector<bool> windowMeasured; // a = 2: every other window measures its small gradient
    d::NoiseProbe windowProbe(0), pairProbe(0);
    for (int rep = -2; rep < o.reps; ++rep) { // two warm-up repetitions
        // A window of two micro-batches, as PACI a = 2 or a flush of m = 2 runs it.
        double probeMs = 0;
        const int estimatesBefore = windowProbe.averager().updates();
        double mb = microBatch(0, 0.5);
        {
            torch::NoGradGuard noGrad;
            const auto t0 = Clock::now();
            windowProbe.afterBackward(params, 0, 2);
            probeMs += since(t0);
        }
        mb += microBatch(1, 0.5);
        {
            torch::NoGradGuard noGrad;
            const auto t0 = Clock::now();
            windowProbe.afterBackward(params, 1, 2); // counts the window's second backward, as the runtime does
            probeMs += since(t0);
        }
        const double up = update(&windowProbe, 0.5, 2, probeMs);
        // Single-micro-batch updates (a = 1), as many as hold one measured pair.
        double pairMs = 0;
        constexpr int kPairUpdates = d::NoiseProbe::kUpdatesPerPair;
        for (int i = 0; i < kPairUpdates; ++i) {
            mb += microBatch(i % 2, 1.0);
            pairProbe.afterBackward(params, 0, 1); // a no-op at a window of one, as in the runtime
            (void)update(&pairProbe, 1.0, 1, pairMs);
        }
        if (rep >= 0) {
            microBatchMs.push_back(mb / (2.0 + kPairUpdates));
            updateMs.push_back(up);
            windowProbeMs.push_back(probeMs);
            windowMeasured.push_back(windowProbe.averager().updates() > estimatesBefore);
            pairProbeMs.push_back(pairMs / kPairUpdates);
        }
    }
    if (windowProbe.averager().updates() == 0 || pairProbe.averager().updates() == 0) {
        usage("the probe recorded no estimate: the bench no longer matches NoiseProbe's protocol");
    }
    std::int64_t parameters = 0;
    for (const torch::Tensor& p : params) {
        parameters += p.numel();
    }
    const double tMb = median(microBatchMs), tUp = median(updateMs);
    // A window that measures pays the norm; at a = 2 one in every two does (kBackwardsPerSmallGradient).
    std::vector<double> measuredWindows;
    double windowSum = 0;
    for (std::size_t i = 0; i < windowProbeMs.size(); ++i) {
        windowSum += windowProbeMs[i];
        if (windowMeasured[i]) {
            measuredWindows.push_back(windowProbeMs[i]);
        }
    }
    if (measuredWindows.empty()) {
        usage("no window measured a small gradient");
    }
    const double tWindow = median(measuredWindows), tPair = median(pairProbeMs);
    const double tWindowOfTwo = windowSum / static_cast<double>(windowProbeMs.size());
    std::printf("model %s (%lld parameters), b = %d, %d thread(s), %d repetitions; medians in ms\n", o.model.c_str(),
        static_cast<long long>(parameters), o.microBatchSize, o.threads, o.reps);
    std::printf("  forward + backward of one micro-batch  %8.3f\n", tMb);
    std::printf("  update without the probe               %8.3f\n", tUp);
    std::printf("  probe per measured window              %8.4f\n", tWindow);
    std::printf("  probe per window of 2 (%zu of %zu measured) %8.4f\n", measuredWindows.size(), windowProbeMs.size(),
        tWindowOfTwo);
    std::printf("  probe per update, a = 1 (1 pair in %d)  %8.4f\n", d::NoiseProbe::kUpdatesPerPair, tPair);
    std::printf("cost per update (probe / (k micro-batches + update)):\n");
    std::printf("  a = 1 (async-1f1b)   %6.3f %%\n", 100.0 * tPair / (tMb + tUp));
    std::printf("  PACI a = 2           %6.3f %%\n", 100.0 * tWindowOfTwo / (2 * tMb + tUp));
    for (int k : {4, 8}) { // every window measures
        std::printf("  PACI a = %-2d          %6.3f %%\n", k, 100.0 * tWindow / (k * tMb + tUp));
    }
    std::printf("  1F1B-flush m = 8     %6.3f %%\n", 100.0 * tWindow / (8 * tMb + tUp));
    return 0;
}
