#include "runtime/rundir/run_dir_writer.h"

#include "profiler/io/chrome_trace.h"
#include "runtime/config/config_toml.h"
#include "base/atomic_file.h"

#include <fcntl.h>
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

} // namespace

Result<RunDirWriter> RunDirWriter::create(const fs::path& dir, RunDirOptions options)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) {
        return makeError(ErrorCode::IoError,
            "cannot create run directory '" + dir.string() + "'"
                + (ec ? ": " + ec.message() : ": a file is in the way"),
            dir.string());
    }
    for (const char* name : {kConfigFileName, kMetricsFileName, kTraceFileName, kSummaryFileName}) {
        if (!fs::exists(dir / name)) {
            continue;
        }
        if (!options.overwrite) {
            return makeError(ErrorCode::InvalidArgument,
                "'" + dir.string() + "' already holds a run (" + name
                    + "); choose another directory or allow overwriting",
                (dir / name).string());
        }
        fs::remove(dir / name, ec);
        if (ec) {
            return makeError(ErrorCode::IoError, "cannot remove '" + (dir / name).string() + "': " + ec.message(),
                (dir / name).string());
        }
    }
    const fs::path metrics = dir / kMetricsFileName;
    const int fd = ::open(metrics.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ioError("cannot open", metrics, errno);
    }
    return RunDirWriter(dir, fd, options.durable);
}

RunDirWriter::RunDirWriter(fs::path dir, int metricsFd, bool durable)
    : m_dir(std::move(dir))
    , m_metricsFd(metricsFd)
    , m_durable(durable)
{}

RunDirWriter::RunDirWriter(RunDirWriter&& other) noexcept
    : m_dir(std::move(other.m_dir))
    , m_metricsFd(std::exchange(other.m_metricsFd, -1))
    , m_durable(other.m_durable)
{}

RunDirWriter& RunDirWriter::operator=(RunDirWriter&& other) noexcept
{
    if (this != &other) {
        if (m_metricsFd >= 0) {
            ::close(m_metricsFd);
        }
        m_dir = std::move(other.m_dir);
        m_metricsFd = std::exchange(other.m_metricsFd, -1);
        m_durable = other.m_durable;
    }
    return *this;
}

RunDirWriter::~RunDirWriter()
{
    if (m_metricsFd >= 0) {
        ::fsync(m_metricsFd);
        ::close(m_metricsFd);
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
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(m_metricsFd, line.data() + done, line.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return ioError("cannot append to", path, errno);
        }
        done += static_cast<std::size_t>(n);
    }
    if (m_durable && ::fdatasync(m_metricsFd) != 0) {
        return ioError("fdatasync failed for", path, errno);
    }
    return ok();
}

Status RunDirWriter::writeTrace(const profiler::TraceSnapshot& trace)
{
    return writeFileAtomic(
        m_dir / kTraceFileName, [&](std::ostream& out) { return profiler::writeChromeTrace(out, trace); });
}

Status RunDirWriter::writeSummary(const nlohmann::json& summary)
{
    return writeFileAtomic(
        m_dir / kSummaryFileName, summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

} // namespace bs::runtime
