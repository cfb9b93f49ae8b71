#pragma once
// One rank's torch.profiler (Kineto) trace as the importer keeps it: the few facts per event that
// action recovery needs (no JSON tree, no per-event strings: names are interned), plus the rank's
// place in the job from `distributedInfo`.

#include "profiler/trace/trace_event.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bs::profiler::kineto {

/// Bounds on the numbers a trace names, checked before anything is sized by them (a label
/// `PP:999999999F0` once sized a 4 GB table; `PP:0F2147483647` wrapped the count of micro-batches).
/// Errors name the field and these ranges.
inline constexpr int kMaxWorldSize = 65536; ///< distributedInfo.world_size; ranks 0..world_size-1
inline constexpr int kMaxStages = 1024; ///< stage (chunk) numbers 0..1023 in PP: labels
inline constexpr int kMaxMicrobatches = 65536; ///< micro-batch numbers 0..65535 per step in labels

/// Kineto's event categories that matter here ("cat"); everything else is Other.
enum class Category : std::uint8_t {
    CpuOp,             ///< "cpu_op": an ATen / c10d / autograd op on a CPU thread
    UserAnnotation,    ///< "user_annotation": record_function (PP:0F3, Forward 2, gloo:recv, Optimizer.step#...)
    GpuUserAnnotation, ///< "gpu_user_annotation": the same range as seen on a GPU stream
    Kernel,            ///< "kernel": a GPU kernel (NCCL's included)
    GpuMemory,         ///< "gpu_memcpy" / "gpu_memset"
    Runtime,           ///< "cuda_runtime" / "cuda_driver": the launch that a kernel's correlation id names
    Other,
};

/// NCCL metadata Kineto records on collective and point-to-point kernels and on the
/// record_param_comms op ("Collective name", "In msg nelems", "Src Rank", ...). -1 / "" = absent.
struct CommInfo
{
    std::string collective; ///< "send", "recv", "allreduce", ...
    std::string dtype;
    std::string processGroup;     ///< "Process Group Name"
    std::string processGroupDesc; ///< "Process Group Description"
    std::string processGroupRanks;///< "Process Group Ranks" as written ("[0, 1]")
    std::int64_t inElements = -1, outElements = -1;
    std::int64_t groupSize = -1;
    std::int64_t srcRank = -1, dstRank = -1;
    std::int64_t seq = -1;
};

/// One complete ("ph":"X") event. 48 bytes.
struct Event
{
    TimeNs start = 0; ///< ns on the rank's own clock (Kineto's µs × 1000, exact for 3 decimals)
    TimeNs end = 0;
    std::int64_t correlation = -1; ///< kernels and runtime launches: CUPTI's correlation id
    std::int64_t sequence = -1;    ///< autograd "Sequence number": a backward op carries its forward's
    std::uint32_t name = 0;        ///< index into RankTrace::names
    std::uint32_t thread = 0;      ///< index into RankTrace::threads ("pid/tid")
    std::int32_t comm = -1;        ///< index into RankTrace::comms
    Category category = Category::Other;
    std::int8_t backwardThread = -1; ///< autograd "Fwd thread id": 1 on ops run by the backward pass
};

/// A process group from distributedInfo.pg_config.
struct ProcessGroup
{
    std::string name, desc;
    std::vector<int> ranks;
};

struct RankTrace
{
    std::string file;        ///< where it was read from (for messages)
    int rank = -1;           ///< distributedInfo.rank (-1 when absent)
    int worldSize = -1;      ///< distributedInfo.world_size
    std::string backend;     ///< distributedInfo.backend ("gloo", "nccl")
    std::vector<ProcessGroup> groups;
    std::int64_t baseTimeNs = 0; ///< baseTimeNanoseconds (0 when absent)
    std::vector<Event> events;   ///< complete events in file order
    std::vector<std::string> names;
    std::vector<std::string> threads;
    std::vector<CommInfo> comms;
    std::size_t skippedEvents = 0; ///< instant, flow, metadata and counter events (not needed)
};

} // namespace bs::profiler::kineto
