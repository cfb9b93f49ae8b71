// Plain LibTorch, `--reference` and the pipeline runtime side by side on the same work (not part
// of ctest; figures go to docs/BENCHMARKS.md). The target: the pipeline runtime within 1.05× of a
// plain LibTorch training loop of the same model.
//
//   runtime_overhead_bench [--model tiny] [--stages 8] [--microbatches 8] [--micro-batch-size 4]
//                          [--schedule 1f1b] [--steps 4] [--rounds 3] [--device cpu|cuda:0]
//                          [--dtype fp32|bf16] [--threads N] [--trace] [--json FILE]
//
// Each measurement is its own process (this program re-runs itself with --one MODE), so no mode
// inherits another's allocator wrapper, thread pools or caches; the modes alternate round by
// round, so a change of the machine's speed hits all three. A process builds its model, trains
// one warm-up batch, then times `--steps` batches on the wall clock (CUDA: after a synchronise).
//   plain      the GPT (the runtime's own modules: same shapes, same weights) in a hand-written
//              loop: m × (forward, cross-entropy, backward of loss/m), torch::optim::AdamW step,
//              zero_grad. No RunSession, no memory tracker, no trace.
//   reference  RunSession --reference: the same loop inside the runtime (metrics, run records).
//   pipeline   RunSession with the schedule: p stages, the serial driver, per-action timing.
// Reported: median seconds per batch and tokens/s per mode, and each mode's ratio to plain.
#include "runtime/plan/common/gpt_shape.h"
#include "runtime/plan/config/config_presets.h"
#include "runtime/train/exec/run_session.h"
#include "runtime/train/model/device_p.h"
#include "runtime/train/model/gpt_modules_p.h"
#include "runtime/train/model/pipeline_model.h"

#include <torch/cuda.h>
#include <torch/optim/adamw.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options
{
    std::string model = "tiny";
    int stages = 8;
    int microbatches = 8;
    int microBatchSize = 4;
    std::string schedule = "1f1b";
    int steps = 4;
    int rounds = 3;
    std::string device = "cpu";
    std::string dtype;
    int threads = 0;
    bool trace = false;
    std::string json;
    std::string one; // child mode
};

[[noreturn]] void usage(const std::string& why)
{
    std::fprintf(stderr, "runtime_overhead_bench: %s\n", why.c_str());
    std::exit(2);
}

Options parse(int argc, char** argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                usage(a + " needs a value");
            }
            return argv[++i];
        };
        auto number = [&](int lo) {
            const std::string v = value();
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || n < lo || n > 1000000) {
                usage(a + " must be an integer >= " + std::to_string(lo) + ", got '" + v + "'");
            }
            return static_cast<int>(n);
        };
        if (a == "--model")
            o.model = value();
        else if (a == "--stages")
            o.stages = number(1);
        else if (a == "--microbatches")
            o.microbatches = number(1);
        else if (a == "--micro-batch-size")
            o.microBatchSize = number(1);
        else if (a == "--schedule")
            o.schedule = value();
        else if (a == "--steps")
            o.steps = number(1);
        else if (a == "--rounds")
            o.rounds = number(1);
        else if (a == "--device")
            o.device = value();
        else if (a == "--dtype")
            o.dtype = value();
        else if (a == "--threads")
            o.threads = number(0);
        else if (a == "--trace")
            o.trace = true;
        else if (a == "--json")
            o.json = value();
        else if (a == "--one")
            o.one = value();
        else
            usage("unknown option '" + a + "'");
    }
    if (!o.one.empty() && o.one != "plain" && o.one != "reference" && o.one != "pipeline") {
        usage("--one must be plain, reference or pipeline");
    }
    return o;
}

bs::runtime::RunConfig configOf(const Options& o)
{
    bs::runtime::RunConfig c = bs::runtime::demoConfig();
    auto shape = bs::gptPreset(o.model);
    if (!shape) {
        usage("--model: " + shape.error().describe());
    }
    c.model.preset = o.model;
    c.model.shape = *shape;
    c.schedule.name = o.schedule;
    c.pipeline.stages = o.stages;
    c.pipeline.microbatches = o.microbatches;
    c.pipeline.accum = o.schedule == "paci" ? o.microbatches : 0;
    c.pipeline.microBatchSize = o.microBatchSize;
    c.training.steps = 1 + o.steps;
    c.training.evalInterval = 0;
    c.device.name = o.device;
    c.device.intraOpThreads = o.threads;
    if (!o.dtype.empty()) {
        c.model.dtype = o.dtype;
    }
    c.profiling.trace = o.trace;
    return c;
}

void synchronise(const std::string& device)
{
    if (device != "cpu") {
        torch::cuda::synchronize();
    }
}

// The plain loop; returns the seconds of `steps` timed batches.
double plain(const Options& o, const bs::runtime::RunConfig& c)
{
    namespace d = bs::runtime::detail;
    if (o.threads > 0) {
        bs::runtime::setIntraOpThreads(o.threads);
    }
    bs::runtime::initIntraOpThreadsOnThisThread();
    const int device = o.device == "cpu" ? -1 : (o.device == "cuda" ? 0 : std::atoi(o.device.c_str() + 5));
    const bool bf16 = c.model.dtype == "bf16" || (c.model.dtype.empty() && device >= 0);
    const torch::Device where = d::torchDevice(device);
    const bs::GptShape& shape = c.model.shape;
    d::GptStage model(shape, 0, shape.layers, true, true, static_cast<std::uint64_t>(c.training.seed));
    model->train();
    model->to(where);
    std::vector<torch::Tensor> decay, noDecay;
    for (const torch::Tensor& p : model->parameters()) {
        (p.dim() >= 2 ? decay : noDecay).push_back(p);
    }
    const auto& opt = c.optimizer;
    auto groupOptions = [&](double wd) {
        return std::make_unique<torch::optim::AdamWOptions>(
            torch::optim::AdamWOptions(opt.lr).betas({opt.beta1, opt.beta2}).eps(opt.eps).weight_decay(wd));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(decay, groupOptions(opt.weightDecay));
    groups.emplace_back(noDecay, groupOptions(0.0));
    torch::optim::AdamW adamw(std::move(groups));
    torch::manual_seed(1);
    const auto b = static_cast<std::int64_t>(o.microBatchSize);
    const torch::Tensor tokens = torch::randint(
        shape.vocab, {o.microbatches, b, shape.seqLen + 1}, torch::TensorOptions().dtype(torch::kLong).device(where));
    const double scale = 1.0 / o.microbatches;
    auto batch = [&] {
        const d::ComputeScope compute(device, bf16);
        for (int i = 0; i < o.microbatches; ++i) {
            const torch::Tensor x = tokens[i].narrow(1, 0, shape.seqLen);
            const torch::Tensor y = tokens[i].narrow(1, 1, shape.seqLen);
            (d::GptStageImpl::loss(model->forward(x), y) * scale).backward();
        }
        adamw.step();
        adamw.zero_grad();
    };
    batch(); // warm-up
    synchronise(o.device);
    const auto t0 = Clock::now();
    for (int n = 0; n < o.steps; ++n) {
        batch();
    }
    synchronise(o.device);
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A RunSession (pipeline or --reference): one warm-up batch, then `steps` batches as one schedule.
double session(const Options& o, const bs::runtime::RunConfig& c, bool reference)
{
    bs::runtime::SessionOptions so;
    so.reference = reference;
    auto s = bs::runtime::RunSession::create(c, so);
    if (!s) {
        usage(s.error().describe());
    }
    if (auto st = s->runSteps(1); !st) {
        usage(st.error().describe());
    }
    synchronise(o.device);
    const auto t0 = Clock::now();
    if (auto st = s->runSteps(o.steps); !st) {
        usage(st.error().describe());
    }
    synchronise(o.device);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    (void)s->finish();
    return seconds;
}

int child(const Options& o)
{
    const bs::runtime::RunConfig c = configOf(o);
    const double seconds = o.one == "plain" ? plain(o, c) : session(o, c, o.one == "reference");
    std::printf("%.9f\n", seconds);
    return 0;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs this program with --one MODE and the same options; the seconds it printed.
double runChild(int argc, char** argv, const std::string& mode)
{
    std::string cmd = "'/proc/" + std::to_string(getpid()) + "/exe'";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json") {
            ++i; // the parent writes it
            continue;
        }
        cmd += " '" + a + "'";
    }
    cmd += " --one " + mode;
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) {
        usage("cannot start " + cmd);
    }
    std::array<char, 128> line{};
    double seconds = -1;
    if (std::fgets(line.data(), static_cast<int>(line.size()), pipe)) {
        seconds = std::atof(line.data());
    }
    if (pclose(pipe) != 0 || seconds <= 0) {
        std::fprintf(stderr, "runtime_overhead_bench: the %s run failed\n", mode.c_str());
        std::exit(1);
    }
    return seconds;
}

} // namespace

int main(int argc, char** argv)
{
    const Options o = parse(argc, argv);
    if (!o.one.empty()) {
        return child(o);
    }
    const std::vector<std::string> modes{"plain", "reference", "pipeline"};
    std::map<std::string, std::vector<double>> perBatch;
    for (int r = 0; r < o.rounds; ++r) {
        for (std::size_t k = 0; k < modes.size(); ++k) { // a different mode first each round
            const std::string& mode = modes[(k + static_cast<std::size_t>(r)) % modes.size()];
            perBatch[mode].push_back(runChild(argc, argv, mode) / o.steps);
        }
    }
    const bs::runtime::RunConfig c = configOf(o);
    const double tokens = static_cast<double>(o.microbatches) * o.microBatchSize * c.model.shape.seqLen;
    const double plainS = median(perBatch["plain"]);
    std::printf("%s, p=%d, m=%d, b=%d, %s on %s%s%s, %d timed batches x %d rounds (median per batch)\n",
        o.model.c_str(), o.stages, o.microbatches, o.microBatchSize, o.schedule.c_str(), o.device.c_str(),
        o.dtype.empty() ? "" : (", " + o.dtype).c_str(), o.trace ? ", trace on" : "", o.steps, o.rounds);
    std::string json = "{\"model\": \"" + o.model + "\", \"stages\": " + std::to_string(o.stages)
        + ", \"microbatches\": " + std::to_string(o.microbatches)
        + ", \"micro_batch_size\": " + std::to_string(o.microBatchSize) + ", \"schedule\": \"" + o.schedule
        + "\", \"device\": \"" + o.device + "\", \"dtype\": \"" + o.dtype + "\", \"steps\": " + std::to_string(o.steps)
        + ", \"rounds\": " + std::to_string(o.rounds);
    for (const std::string& mode : modes) {
        const double s = median(perBatch[mode]);
        std::printf("  %-9s %9.4f s/batch %12.1f tokens/s  %.3fx plain\n", mode.c_str(), s, tokens / s, s / plainS);
        char buf[200];
        std::snprintf(buf, sizeof buf, ", \"%s\": {\"s_per_batch\": %.6f, \"tokens_per_s\": %.1f, \"vs_plain\": %.4f}",
            mode.c_str(), s, tokens / s, s / plainS);
        json += buf;
    }
    const double ratio = median(perBatch["pipeline"]) / plainS;
    json +=
        ", \"pipeline_vs_plain\": " + std::to_string(ratio) + ", \"pass\": " + (ratio <= 1.05 ? "true" : "false") + "}";
    std::printf("pipeline / plain %.3f (target <= 1.05): %s\n", ratio, ratio <= 1.05 ? "pass" : "FAIL");
    if (!o.json.empty()) {
        FILE* f = std::fopen(o.json.c_str(), "w");
        if (!f) {
            usage("--json: cannot write " + o.json);
        }
        std::fprintf(f, "%s\n", json.c_str());
        std::fclose(f);
    }
    return 0;
}
