#include "runtime/plan/rundir/run_dir_writer.h"

#include "base/atomic_file.h"
#include "base/bounded_read.h"
#include "profiler/io/chrome_trace.h"
#include "runtime/plan/config/config_toml.h"
#include "runtime/plan/rundir/checkpoint_state.h"
#include "runtime/plan/rundir/run_dir_reader.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bs::runtime {

namespace fs = std::filesystem;

namespace {

Error ioError(const std::string& what, const fs::path& path, int err)
{
    return makeError(ErrorCode::IoError, what + " '" + path.string() + "': " + std::strerror(err), path.string());
}

constexpr const char* kRunFileNames[] = {
    kConfigFileName, kMetricsFileName, kTraceFileName, kPartialTraceFileName, kSummaryFileName};
constexpr const char* kStagingPrefix = ".incoming-run-";

/// The pid in "<prefix><pid>[-...]", or 0.
pid_t pidAfter(const std::string& name, std::size_t at)
{
    pid_t pid = 0;
    for (std::size_t i = at; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
        pid = pid * 10 + (name[i] - '0');
    }
    return pid;
}

bool alive(pid_t pid)
{
    return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

/// Removes what writers killed in the middle of a write left behind: atomic-write temp files
/// (".NAME.tmp-PID-N", base/atomic_file.cpp) and staging directories of overwriting runs, both only
/// when the process that made them is gone.
void removeStaleFiles(const fs::path& dir)
{
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const std::size_t tmp = name.find(".tmp-");
        if (name.size() > 1 && name[0] == '.' && tmp != std::string::npos && !alive(pidAfter(name, tmp + 5))) {
            std::error_code ignored;
            fs::remove(it->path(), ignored);
        } else if (name.rfind(kStagingPrefix, 0) == 0 && !alive(pidAfter(name, std::string(kStagingPrefix).size()))) {
            std::error_code ignored;
            fs::remove_all(it->path(), ignored);
        }
    }
}

/// One write(2) per chunk where the kernel allows, so a kill leaves whole chunks.
Status writeAll(int fd, std::string_view bytes, const fs::path& path)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return ioError("cannot append to", path, n == 0 ? EIO : errno);
        }
        done += static_cast<std::size_t>(n);
    }
    return ok();
}

} // namespace

Result<RunDirWriter> RunDirWriter::create(const fs::path& dir, RunDirOptions options)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir, ec)) {
        return makeError(ErrorCode::IoError,
            "cannot create run directory '" + dir.string() + "'"
                + (ec ? ": " + ec.message() : ": a file is in the way"),
            dir.string());
    }
    removeStaleFiles(dir);
    bool holdsRun = false;
    for (const char* name : kRunFileNames) {
        if (!fs::exists(dir / name, ec)) {
            continue;
        }
        if (!options.overwrite) {
            return makeError(ErrorCode::InvalidArgument,
                "'" + dir.string() + "' already holds a run (" + name
                    + "); choose another directory or allow overwriting",
                (dir / name).string());
        }
        holdsRun = true;
    }
    // Overwriting: the new run is written next to the old one and replaces it only when its last
    // file is in place (writeSummary), so a new run that fails (disk full, killed) leaves the old
    // one whole.
    fs::path writeDir = dir;
    if (holdsRun) {
        writeDir = dir / (std::string(kStagingPrefix) + std::to_string(::getpid()));
        fs::remove_all(writeDir, ec);
        if (!fs::create_directory(writeDir, ec) || ec) {
            return makeError(ErrorCode::IoError,
                "cannot create '" + writeDir.string() + "'" + (ec ? ": " + ec.message() : ""), writeDir.string());
        }
    }
    const fs::path metrics = writeDir / kMetricsFileName;
    const int fd = ::open(metrics.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ioError("cannot open", metrics, errno);
    }
    RunDirWriter writer(writeDir, fd, options.durable);
    writer.m_finalDir = dir;
    return writer;
}

Result<RunDirWriter> RunDirWriter::resume(const fs::path& dir, int keepSteps, RunDirOptions options)
{
    std::error_code ec;
    if (!fs::is_regular_file(dir / kConfigFileName, ec)) {
        return makeError(ErrorCode::InvalidArgument, "'" + dir.string() + "' holds no run to resume (no config.toml)",
            (dir / kConfigFileName).string());
    }
    removeStaleFiles(dir);
    const fs::path metrics = dir / kMetricsFileName;
    if (fs::exists(metrics, ec)) {
        auto text = readBoundedFile(metrics, kMaxMetricsFileBytes, "metrics file");
        if (!text) {
            return text.error();
        }
        auto log = parseMetricsJsonl(*text, metrics.string());
        if (!log) {
            return log.error();
        }
        std::string kept;
        for (const nlohmann::json& record : log->records) {
            const auto step = record.find("step");
            if (step != record.end() && step->is_number_integer() && step->get<std::int64_t>() < keepSteps) {
                kept += record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
            }
        }
        if (Status written = writeFileAtomic(metrics, kept); !written) {
            return written.error();
        }
    }
    fs::remove(dir / kSummaryFileName, ec);
    fs::remove(dir / "error.log", ec); // the stopped session's; the resumed one writes its own
    const int fd = ::open(metrics.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ioError("cannot open", metrics, errno);
    }
    RunDirWriter writer(dir, fd, options.durable);
    writer.m_finalDir = dir;
    writer.m_dropOldTrace = true;
    return writer;
}

fs::path RunDirWriter::checkpointDir() const
{
    return m_dir / kCheckpointDirName;
}

RunDirWriter::RunDirWriter(fs::path dir, int metricsFd, bool durable)
    : m_dir(std::move(dir))
    , m_metricsFd(metricsFd)
    , m_durable(durable)
{}

RunDirWriter::RunDirWriter(RunDirWriter&& other) noexcept
    : m_dir(std::move(other.m_dir))
    , m_finalDir(std::move(other.m_finalDir))
    , m_metricsFd(std::exchange(other.m_metricsFd, -1))
    , m_traceFd(std::exchange(other.m_traceFd, -1))
    , m_traceWritten(other.m_traceWritten)
    , m_traceHasEvents(other.m_traceHasEvents)
    , m_durable(other.m_durable)
    , m_dropOldTrace(other.m_dropOldTrace)
{}

RunDirWriter& RunDirWriter::operator=(RunDirWriter&& other) noexcept
{
    if (this != &other) {
        closeFds();
        m_dir = std::move(other.m_dir);
        m_finalDir = std::move(other.m_finalDir);
        m_metricsFd = std::exchange(other.m_metricsFd, -1);
        m_traceFd = std::exchange(other.m_traceFd, -1);
        m_traceWritten = other.m_traceWritten;
        m_traceHasEvents = other.m_traceHasEvents;
        m_durable = other.m_durable;
        m_dropOldTrace = other.m_dropOldTrace;
    }
    return *this;
}

RunDirWriter::~RunDirWriter()
{
    closeFds();
}

void RunDirWriter::closeFds()
{
    for (int* fd : {&m_metricsFd, &m_traceFd}) {
        if (*fd >= 0) {
            ::fsync(*fd);
            ::close(*fd);
            *fd = -1;
        }
    }
}

Status RunDirWriter::writeConfig(const RunConfig& config)
{
    return writeFileAtomic(m_dir / kConfigFileName, toToml(config));
}

Status RunDirWriter::appendMetrics(const nlohmann::json& record)
{
    const fs::path path = m_dir / kMetricsFileName;
    if (!record.is_object()) {
        return makeError(ErrorCode::InvalidArgument, "a metrics record must be a JSON object", path.string());
    }
    // One write(2) of the whole line: O_APPEND makes it land at the end in one piece.
    const std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (Status written = writeAll(m_metricsFd, line, path); !written) {
        return written;
    }
    if (m_durable && ::fdatasync(m_metricsFd) != 0) {
        return ioError("fdatasync failed for", path, errno);
    }
    return ok();
}

Status RunDirWriter::appendTrace(const profiler::TraceSnapshot& trace)
{
    const fs::path path = m_dir / kPartialTraceFileName;
    if (m_traceFd < 0) {
        m_traceFd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
        if (m_traceFd < 0) {
            return ioError("cannot open", path, errno);
        }
        if (Status head = writeAll(m_traceFd, profiler::chromeTraceHead(trace.meta()), path); !head) {
            return head;
        }
        m_traceWritten = 0;
        m_traceHasEvents = trace.meta().stages > 0; // the head's stage names come before any event
    }
    if (trace.size() <= m_traceWritten) {
        return ok();
    }
    const std::string chunk = profiler::chromeTraceChunk(trace, m_traceWritten, trace.size(), !m_traceHasEvents);
    if (Status written = writeAll(m_traceFd, chunk, path); !written) {
        return written;
    }
    m_traceWritten = trace.size();
    m_traceHasEvents = true;
    if (m_dropOldTrace) { // the continued trace holds the old one's kept events: readers must take it
        std::error_code ignored;
        fs::remove(m_dir / kTraceFileName, ignored);
        m_dropOldTrace = false;
    }
    return ok();
}

Status RunDirWriter::appendBatch(const nlohmann::json& record, const profiler::TraceSnapshot* trace)
{
    if (trace) {
        if (Status appended = appendTrace(*trace); !appended) {
            return appended;
        }
    }
    return appendMetrics(record);
}

Status RunDirWriter::writeTrace(const profiler::TraceSnapshot& trace)
{
    Status written = writeFileAtomic(
        m_dir / kTraceFileName, [&](std::ostream& out) { return profiler::writeChromeTrace(out, trace); });
    if (written) { // the whole trace is in place: the chunks are redundant
        if (m_traceFd >= 0) {
            ::close(m_traceFd);
            m_traceFd = -1;
        }
        std::error_code ignored;
        fs::remove(m_dir / kPartialTraceFileName, ignored);
    }
    return written;
}

Status RunDirWriter::writeSummary(const nlohmann::json& summary)
{
    Status written = writeFileAtomic(
        m_dir / kSummaryFileName, summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!written || m_dir == m_finalDir) {
        return written;
    }
    return promote();
}

Status adoptStagedRun(const fs::path& dir, pid_t pid)
{
    const fs::path staged = dir / (std::string(kStagingPrefix) + std::to_string(pid));
    std::error_code ec;
    if (!fs::is_directory(staged, ec)) {
        return ok();
    }
    for (const char* name : kRunFileNames) {
        const fs::path from = staged / name;
        const fs::path to = dir / name;
        if (fs::exists(from, ec)) {
            if (::rename(from.c_str(), to.c_str()) != 0) {
                return ioError("cannot move the stopped run's file over", to, errno);
            }
        } else {
            fs::remove(to, ec);
        }
    }
    fs::remove_all(staged, ec);
    return ok();
}

Status RunDirWriter::promote()
{
    // Every file of the new run is in place: each replaces the old run's file of that name by a
    // rename (atomic), summary.json last; old files the new run has none of go.
    closeFds();
    std::error_code ec;
    for (const char* name :
        {kConfigFileName, kMetricsFileName, kTraceFileName, kPartialTraceFileName, kSummaryFileName}) {
        const fs::path from = m_dir / name;
        const fs::path to = m_finalDir / name;
        if (fs::exists(from, ec)) {
            if (::rename(from.c_str(), to.c_str()) != 0) {
                return ioError("cannot move the new run's file over", to, errno);
            }
        } else {
            fs::remove(to, ec);
        }
    }
    if (fs::exists(m_dir / kCheckpointDirName, ec)) { // the new run's checkpoints replace the old run's
        fs::remove_all(m_finalDir / kCheckpointDirName, ec);
        if (::rename((m_dir / kCheckpointDirName).c_str(), (m_finalDir / kCheckpointDirName).c_str()) != 0) {
            return ioError("cannot move the new run's checkpoint over", m_finalDir / kCheckpointDirName, errno);
        }
    } else {
        fs::remove_all(m_finalDir / kCheckpointDirName, ec);
    }
    fs::remove_all(m_dir, ec);
    m_dir = m_finalDir;
    return ok();
}

} // namespace bs::runtime
