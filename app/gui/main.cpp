// bubblescope: the desktop application. Holds no logic: parses a few options, opens the main
// window with the embedded demo, or renders it headless to a PNG (--screenshot).

#include "base/atomic_file.h"
#include "runtime/plan/gpu/gpu_probe.h"
#include "runtime/plan/schedule/catalogue.h"
#if defined(BS_HAVE_RUN_SESSION)
#include "runtime/train/module/module_loader.h"
#endif
#include "ui/shell/main_window.h"
#include "ui/tuning/prediction_check_view.h"
#include "ui/tuning/prediction_engine.h"
#include "ui/tuning/tuning_panel.h"

#include <QApplication>
#include <QBuffer>
#include <QEventLoop>
#include <QIcon>
#include <QMessageBox>
#include <QScreen>
#include <QSlider>
#include <QTabWidget>
#include <QTableWidget>
#include <QTimer>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "Usage: bubblescope [options]\n"
    "\n"
    "Profiler and tuner for pipeline-parallel training. With no options, opens the window and plays\n"
    "the embedded demo: an 8-stage tiny GPT under PACI (a=8), then 1F1B-flush (trained live on the\n"
    "CPU when the LibTorch runtime is built in, else replayed from the simulator).\n"
    "\n"
    "Options:\n"
    "  --screenshot FILE   run the demo headless (offscreen), save the window as PNG, exit\n"
    "  --demo-steps N      global batches per demo run (default 4)\n"
    "  --size WxH          window size for --screenshot (default 1280x800; 400x300 to 7680x4320)\n"
    "  --open DIR          open a run directory instead of the demo (repeatable; with --screenshot\n"
    "                      also prints the calibrated prediction against the measured figures)\n"
    "  --tab N             chart tab to show: 0 stages, 1 loss/drift/throughput, 2 prediction check\n"
    "  --what-if-a N       with --screenshot: after the demo, set the panel's a to N (a prediction lane)\n"
    "  --demo A,B          the demo's two schedules (default paci,1f1b; `bubblescope-cli schedules`)\n"
    "  --simulated         replay the demo from the simulator instead of training it live\n"
    "  -h, --help          show this help and exit\n"
    "  -v, --version       show the version and exit\n"
    "\n"
    "The screenshot replaces a regular file atomically (a symlink's target); a device, FIFO, socket\n"
    "or directory is refused.\n"
    "Exit codes: 0 done; 1 failed while running (the demo did not finish); 2 bad input or refused\n"
    "(an option, a run directory that cannot be opened, a file that cannot be written, no display).\n";

struct Options
{
    std::string screenshot;
    int demoSteps = 4;
    std::vector<std::string> open;
    int tab = 0;
    std::string schedule = "paci";
    std::string baseline = "1f1b";
    bool simulated = false;
    int width = 1280;
    int height = 800;
    int whatIfAccum = 0; ///< > 0: the panel's a after the demo, so a prediction lane shows
};

// The largest screenshot: 8K UHD. A window is grabbed into one image of W x H x 4 bytes; past
// this size the grab took a minute and gigabytes, and 100000x100000 crashed inside Qt.
constexpr int kMaxWidth = 7680;
constexpr int kMaxHeight = 4320;

/// "WxH" with both numbers in range, nothing before or after; false otherwise.
bool parseSize(const char* text, int& width, int& height)
{
    char* end = nullptr;
    errno = 0;
    const long w = std::strtol(text, &end, 10);
    if (end == text || *end != 'x' || errno != 0 || !std::isdigit(static_cast<unsigned char>(*text))) {
        return false;
    }
    const char* rest = end + 1;
    const long h = std::strtol(rest, &end, 10);
    if (end == rest || *end != '\0' || errno != 0 || !std::isdigit(static_cast<unsigned char>(*rest))) {
        return false;
    }
    if (w < 400 || w > kMaxWidth || h < 300 || h > kMaxHeight) {
        return false;
    }
    width = static_cast<int>(w);
    height = static_cast<int>(h);
    return true;
}

bool hasDisplay()
{
    for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}) {
        const char* v = std::getenv(var);
        if (v && *v) {
            return true;
        }
    }
    return false;
}

/// Returns the exit code to stop with, or -1 to continue.
int parse(int argc, char** argv, Options& options)
{
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (arg == "-v" || arg == "--version") {
            std::printf("bubblescope %s\n", BS_VERSION);
            return 0;
        }
        if (arg == "--screenshot" && hasValue) {
            options.screenshot = argv[++i];
        } else if (arg == "--demo-steps" && hasValue) {
            options.demoSteps = std::atoi(argv[++i]);
            if (options.demoSteps < 1 || options.demoSteps > 1000) {
                std::fprintf(stderr, "error: --demo-steps must be between 1 and 1000\n");
                return 2;
            }
        } else if (arg == "--open" && hasValue) {
            options.open.emplace_back(argv[++i]);
        } else if (arg == "--tab" && hasValue) {
            options.tab = std::atoi(argv[++i]);
            if (options.tab < 0 || options.tab > 2) {
                std::fprintf(stderr, "error: --tab must be 0, 1 or 2\n");
                return 2;
            }
        } else if (arg == "--demo" && hasValue) {
            const std::string pair = argv[++i];
            const auto comma = pair.find(',');
            options.schedule = pair.substr(0, comma);
            options.baseline = comma == std::string::npos ? std::string() : pair.substr(comma + 1);
            for (const std::string& name : {options.schedule, options.baseline}) {
                if (!bs::runtime::isKnownSchedule(name)) {
                    std::fprintf(stderr, "error: --demo: unknown schedule '%s'\n  hint: bubblescope-cli schedules\n",
                        name.c_str());
                    return 2;
                }
            }
        } else if (arg == "--what-if-a" && hasValue) {
            options.whatIfAccum = std::atoi(argv[++i]);
            if (options.whatIfAccum < 1 || options.whatIfAccum > 64) {
                std::fprintf(stderr, "error: --what-if-a must be between 1 and 64\n");
                return 2;
            }
        } else if (arg == "--simulated") {
            options.simulated = true;
        } else if (arg == "--size" && hasValue) {
            const char* size = argv[++i];
            if (!parseSize(size, options.width, options.height)) {
                std::fprintf(stderr, "error: --size: got '%s'; allowed: WxH with W in 400..%d and H in 300..%d\n", size,
                    kMaxWidth, kMaxHeight);
                return 2;
            }
        } else if (arg.rfind("-", 0) == 0 && arg != "-platform" && arg != "-style") {
            std::fprintf(stderr, "error: unknown option '%s'\n  hint: bubblescope --help\n", arg.c_str());
            return 2;
        }
    }
    return -1;
}

/// Opens every --open directory. With `dialog` (the interactive window) a failure is a message box
/// and the window stays open with the runs that did open; otherwise (screenshots) it is an error.
bool openRuns(bs::ui::MainWindow& window, const Options& options, bool dialog = false)
{
    bool all = true;
    for (const std::string& dir : options.open) {
        QString error;
        if (!window.openRunDirectory(QString::fromStdString(dir), &error)) {
            std::fprintf(stderr, "error: cannot open %s: %s\n", dir.c_str(), qPrintable(error));
            if (!dialog) {
                return false;
            }
            QMessageBox::warning(&window, QObject::tr("Cannot open run"),
                QObject::tr("Cannot open %1:\n%2").arg(QString::fromStdString(dir), error));
            all = false;
        }
    }
    return all;
}

/// The "Prediction vs measured" rows as text: run, figure, predicted, measured, error.
void printPredictionCheck(const bs::ui::MainWindow& window)
{
    const QTableWidget* table = window.predictionCheck()->table();
    for (int row = 0; row < table->rowCount(); ++row) {
        QStringList cells;
        for (int col = 0; col < table->columnCount(); ++col) {
            cells << table->item(row, col)->text();
        }
        std::printf("prediction check: %s\n", qPrintable(cells.join(QStringLiteral(" | "))));
    }
}

int screenshot(const Options& options)
{
    bs::ui::MainWindow window(/*restoreSettings=*/false);
    window.resize(options.width, options.height);
    window.show();
    if (!openRuns(window, options)) {
        return 2; // a run directory that cannot be opened is bad input, as in the CLI
    }
    if (options.open.empty()) {
        bs::ui::DemoOptions demo;
        demo.batches = options.demoSteps;
        demo.schedule = options.schedule;
        demo.baseline = options.baseline;
        // The demo the window opens with: trained live with LibTorch when the runtime is built in.
        demo.live = bs::ui::liveTrainingAvailable() && !options.simulated;
        if (!window.runDemoToEnd(demo, /*timeoutMs=*/180'000)) {
            std::fprintf(stderr, "error: the demo did not finish\n");
            return 1;
        }
    }
    if (options.whatIfAccum > 0) { // the what-if's lane under the runs it predicts
        QEventLoop predicted;
        QObject::connect(window.engine(), &bs::ui::PredictionEngine::predicted, &predicted, &QEventLoop::quit);
        QTimer::singleShot(10'000, &predicted, &QEventLoop::quit);
        window.tuning()->accumSlider()->setValue(options.whatIfAccum);
        predicted.exec();
    }
    printPredictionCheck(window);
    if (auto* tabs = window.findChild<QTabWidget*>(QStringLiteral("chartTabs"))) {
        tabs->setCurrentIndex(options.tab);
    }
    // Fill the Suggest table too, so the picture shows what the panel does.
    QEventLoop wait;
    QObject::connect(window.tuning(), &bs::ui::TuningPanel::suggestionsReady, &wait, &QEventLoop::quit);
    QTimer::singleShot(20'000, &wait, &QEventLoop::quit);
    window.tuning()->suggest();
    wait.exec();
    // Let the layouts settle: a wrapped label's new height reaches the dock's scroll area a few
    // posted layout requests later; grabbed before that, the panel was drawn squeezed.
    QEventLoop settle;
    QTimer::singleShot(200, &settle, &QEventLoop::quit);
    settle.exec();
    QByteArray png;
    QBuffer buffer(&png);
    if (!buffer.open(QIODevice::WriteOnly) || !window.grab().save(&buffer, "PNG")) {
        std::fprintf(stderr, "error: cannot render the window as PNG\n");
        return 1;
    }
    const bs::Status written = bs::writeFileAtomic(
        options.screenshot, std::string_view(png.constData(), static_cast<std::size_t>(png.size())));
    if (!written) {
        std::fprintf(stderr, "error: %s\n", written.error().message.c_str());
        return 2; // as the CLI: a file that cannot be written is bad input
    }
    std::printf("wrote %s (%dx%d)\n", options.screenshot.c_str(), options.width, options.height);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    Options options;
    if (const int code = parse(argc, argv, options); code >= 0) {
        return code;
    }
    if (!options.screenshot.empty()) {
        if (!hasDisplay()) {
            qputenv("QT_QPA_PLATFORM", "offscreen");
        }
    } else if (!hasDisplay()) {
        std::fprintf(stderr,
            "bubblescope: no display (DISPLAY, WAYLAND_DISPLAY and QT_QPA_PLATFORM are unset).\n"
            "  hint: run the headless demo instead: bubblescope-cli compare --model tiny -b 8 -a 8 -n 4 "
            "-s paci 1f1b\n"
            "  hint: or render the window to a file: bubblescope --screenshot shot.png\n");
        return 2;
    }
    // "Run on" lists each GPU; it can train there only with the CUDA runtime module (built by
    // scripts/demo.sh where it finds an NVIDIA GPU).
#if defined(BS_HAVE_RUN_SESSION)
    bs::runtime::gpu::setCudaModuleCheck([] { return bs::runtime::cudaModuleMissing(); });
#else
    bs::runtime::gpu::setCudaModuleCheck(
        [] { return std::string("this build has no training runtime (no LibTorch)"); });
#endif
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("Bubblescope"));
    QApplication::setApplicationName(QStringLiteral("bubblescope"));
    QApplication::setApplicationDisplayName(QStringLiteral("Bubblescope"));
    QApplication::setApplicationVersion(QStringLiteral(BS_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("io.github.bubblescope.Bubblescope"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/bubblescope.svg")));
    if (!options.screenshot.empty()) {
        return screenshot(options);
    }
    bs::ui::MainWindow window;
    window.show();
    if (!options.open.empty()) {
        QTimer::singleShot(0, &window, [&window, &options] { openRuns(window, options, /*dialog=*/true); });
        return QApplication::exec();
    }
    bs::ui::DemoOptions demo;
    demo.batches = options.demoSteps;
    demo.schedule = options.schedule;
    demo.baseline = options.baseline;
    demo.live = bs::ui::liveTrainingAvailable() && !options.simulated; // real LibTorch training when built in
    QTimer::singleShot(0, &window, [&window, demo] { window.startDemo(demo); });
    return QApplication::exec();
}
